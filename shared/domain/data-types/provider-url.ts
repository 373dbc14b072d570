import { isIPv4, isIPv6 } from "node:net";

/**
 * SSRF guard for external-api data types. At save time the URL's host may not be a literal
 * loopback, link-local, private or otherwise non-public address (nor `localhost`). Names are not
 * resolved here: the records area re-checks the *resolved* address with `isDisallowedAddress`
 * before every fetch, which also defeats DNS names pointing at private addresses.
 */
export type AddressClass = "public" | "loopback" | "private";

function ipv4Class(address: string): AddressClass {
  const [a = 0, b = 0] = address.split(".").map(Number);
  if (a === 127) return "loopback";
  const isPrivate =
    a === 0 || // "this" network, 0.0.0.0
    a === 10 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local (cloud metadata lives here)
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && address.split(".")[2] === "0") || // IETF protocol assignments
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224; // multicast, reserved, broadcast
  return isPrivate ? "private" : "public";
}

/** The 8 16-bit groups of an IPv6 address (with an embedded dotted IPv4 tail expanded). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().split("%")[0] ?? "";
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1].split(".").map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part ? part.split(":").map((group) => Number.parseInt(group, 16)) : []);
  const headGroups = parse(head);
  const tailGroups = tail === undefined ? [] : parse(tail);
  const missing = 8 - headGroups.length - tailGroups.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  return [...headGroups, ...Array<number>(missing).fill(0), ...tailGroups];
}

function ipv6Class(address: string): AddressClass {
  const groups = ipv6Groups(address);
  if (!groups) return "private";
  const [g0 = 0, , , , , g5 = 0, g6 = 0, g7 = 0] = groups;
  const embeddedV4 = `${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`;
  const firstFiveZero = groups.slice(0, 5).every((group) => group === 0);
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) addresses are judged by their IPv4 part.
  if (firstFiveZero && g5 === 0xffff) return ipv4Class(embeddedV4);
  if (firstFiveZero && g5 === 0) {
    if (g6 === 0 && g7 === 1) return "loopback";
    if (g6 === 0 && g7 === 0) return "private"; // unspecified ::
    return ipv4Class(embeddedV4);
  }
  if ((g0 & 0xffc0) === 0xfe80) return "private"; // link-local fe80::/10
  if ((g0 & 0xfe00) === 0xfc00) return "private"; // unique local fc00::/7
  if ((g0 & 0xff00) === 0xff00) return "private"; // multicast
  return "public";
}

/** Class of a literal IP address (IPv4 or IPv6, brackets allowed); undefined when it is not an IP. */
export function addressClass(address: string): AddressClass | undefined {
  const bare = address.replace(/^\[(.*)\]$/, "$1");
  if (isIPv4(bare)) return ipv4Class(bare);
  if (isIPv6(bare)) return ipv6Class(bare);
  return undefined;
}

/** For the fetch side: true when a resolved address must not be contacted. */
export function isDisallowedAddress(address: string, options: { allowLoopback?: boolean } = {}): boolean {
  const found = addressClass(address) ?? "private";
  return found === "private" || (found === "loopback" && !options.allowLoopback);
}

/** Why the URL is not acceptable as an external API endpoint, or undefined when it is. */
export function providerUrlProblem(text: string, options: { allowLoopback?: boolean } = {}): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute http:// or https:// URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an absolute http:// or https:// URL";
  if (url.username || url.password) return "must not carry credentials; send them as providerConfig.key";
  // The WHATWG parser has already normalised numeric hosts (http://2130706433/ → 127.0.0.1).
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  const literal = addressClass(host);
  const isLoopbackName = host === "localhost" || host.endsWith(".localhost");
  if (literal === "private") return "must not point at a private, link-local or reserved address";
  if ((literal === "loopback" || isLoopbackName) && !options.allowLoopback) return "must not point at a loopback address";
  return undefined;
}
