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

/** a.b.c.d from two 16-bit groups. */
const dottedOf = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * Class of an IPv4 address reached through a translation or tunnel prefix (NAT64, 6to4): the
 * embedded address decides, and an embedded loopback is not this host's loopback, so it is never
 * admitted by the test-only loopback switch.
 */
function translatedClass(embedded: string): AddressClass {
  const found = ipv4Class(embedded);
  return found === "public" ? "public" : "private";
}

function ipv6Class(address: string): AddressClass {
  const groups = ipv6Groups(address);
  if (!groups || groups.some((group) => !Number.isInteger(group) || group < 0 || group > 0xffff)) return "private";
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embeddedV4 = dottedOf(g6, g7);
  const firstFourZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and IPv4-translated
  // (::ffff:0:a.b.c.d) addresses are judged by their IPv4 part.
  if (firstFourZero && g4 === 0 && g5 === 0xffff) return ipv4Class(embeddedV4);
  if (firstFourZero && g4 === 0xffff && g5 === 0) return translatedClass(embeddedV4);
  if (firstFourZero && g4 === 0 && g5 === 0) {
    if (g6 === 0 && g7 === 1) return "loopback";
    if (g6 === 0 && g7 === 0) return "private"; // unspecified ::
    return ipv4Class(embeddedV4);
  }
  // NAT64 well-known prefix 64:ff9b::/96: the last 32 bits are the IPv4 address reached.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return translatedClass(embeddedV4);
  // Local-use NAT64 64:ff9b:1::/48 (RFC 8215): the IPv4 position depends on the operator's prefix length.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "private";
  // 6to4 2002::/16: bits 16–47 are the IPv4 address of the relay the packets go to.
  if (g0 === 0x2002) return translatedClass(dottedOf(g1, g2));
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
