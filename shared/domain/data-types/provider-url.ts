import { isIPv4, isIPv6 } from "node:net";

/**
 * SSRF guard for external-api data types and webhooks. At save time the URL's host may not be a literal
 * loopback, link-local, private or otherwise non-public address (nor `localhost`). Names are not
 * resolved here: the records area re-checks the *resolved* address with `isDisallowedAddress`
 * before every fetch, which also defeats DNS names pointing at private addresses.
 */
export type AddressClass = "public" | "loopback" | "private";

/**
 * How a special-purpose range is judged: refused ("private"), this host ("loopback"), or by the
 * IPv4 address it embeds (`embedded`: mapped/compatible forms judged as that IPv4; `translated`:
 * NAT64 and 6to4, where an embedded loopback is another host's, so never admitted as loopback).
 */
type RangeRule = "private" | "loopback" | { embedded: "last32" | "6to4"; translated: boolean };

export interface SpecialPurposeRange {
  /** CIDR prefix. */
  prefix: string;
  /** The registry's name for it (or the multicast registry's), with its RFC. */
  name: string;
  rule: RangeRule;
}

/**
 * The IANA IPv4 and IPv6 Special-Purpose Address Registries (plus multicast and the reserved
 * classes), one row per entry; everything else is public. An address takes the rule of the
 * *first* row whose prefix holds it, so a more specific row comes before the row that contains it
 * (`::1/128` before `::/96`). Registry entries that are globally reachable (AS112, AMT, PCP
 * anycast, ORCHIDv2) are refused too: no webhook receiver or data provider lives there.
 */
export const specialPurposeRanges: readonly SpecialPurposeRange[] = [
  // IPv4 (iana-ipv4-special-registry)
  { prefix: "0.0.0.0/8", name: '"This network" (RFC 791)', rule: "private" },
  { prefix: "10.0.0.0/8", name: "Private-Use (RFC 1918)", rule: "private" },
  { prefix: "100.64.0.0/10", name: "Shared Address Space, carrier-grade NAT (RFC 6598)", rule: "private" },
  { prefix: "127.0.0.0/8", name: "Loopback (RFC 1122)", rule: "loopback" },
  { prefix: "169.254.0.0/16", name: "Link Local, cloud metadata (RFC 3927)", rule: "private" },
  { prefix: "172.16.0.0/12", name: "Private-Use (RFC 1918)", rule: "private" },
  {
    prefix: "192.0.0.0/24",
    name: "IETF Protocol Assignments, DS-Lite, NAT64/DNS64 discovery, PCP and TURN anycast (RFC 6890)",
    rule: "private",
  },
  { prefix: "192.0.2.0/24", name: "Documentation TEST-NET-1 (RFC 5737)", rule: "private" },
  { prefix: "192.31.196.0/24", name: "AS112-v4 (RFC 7535)", rule: "private" },
  { prefix: "192.52.193.0/24", name: "AMT (RFC 7450)", rule: "private" },
  { prefix: "192.88.99.0/24", name: "Deprecated 6to4 Relay Anycast (RFC 7526)", rule: "private" },
  { prefix: "192.168.0.0/16", name: "Private-Use (RFC 1918)", rule: "private" },
  { prefix: "192.175.48.0/24", name: "Direct Delegation AS112 Service (RFC 7534)", rule: "private" },
  { prefix: "198.18.0.0/15", name: "Benchmarking (RFC 2544)", rule: "private" },
  { prefix: "198.51.100.0/24", name: "Documentation TEST-NET-2 (RFC 5737)", rule: "private" },
  { prefix: "203.0.113.0/24", name: "Documentation TEST-NET-3 (RFC 5737)", rule: "private" },
  { prefix: "224.0.0.0/4", name: "Multicast (RFC 5771)", rule: "private" },
  { prefix: "240.0.0.0/4", name: "Reserved, incl. Limited Broadcast 255.255.255.255/32 (RFC 1112, RFC 919)", rule: "private" },
  // IPv6 (iana-ipv6-special-registry)
  { prefix: "::/128", name: "Unspecified Address (RFC 4291)", rule: "private" },
  { prefix: "::1/128", name: "Loopback Address (RFC 4291)", rule: "loopback" },
  { prefix: "::ffff:0:0/96", name: "IPv4-mapped Address (RFC 4291)", rule: { embedded: "last32", translated: false } },
  { prefix: "::ffff:0:0:0/96", name: "IPv4-translated Address (RFC 2765)", rule: { embedded: "last32", translated: true } },
  { prefix: "::/96", name: "IPv4-compatible Address, deprecated (RFC 4291)", rule: { embedded: "last32", translated: false } },
  { prefix: "64:ff9b::/96", name: "IPv4-IPv6 Translation, NAT64 (RFC 6052)", rule: { embedded: "last32", translated: true } },
  { prefix: "64:ff9b:1::/48", name: "IPv4-IPv6 Translation, local-use NAT64 (RFC 8215)", rule: "private" },
  { prefix: "100::/64", name: "Discard-Only Address Block (RFC 6666)", rule: "private" },
  { prefix: "100:0:0:1::/64", name: "Dummy IPv6 Prefix (RFC 9780)", rule: "private" },
  { prefix: "2001::/32", name: "TEREDO, embeds the IPv4 of a relay and a client (RFC 4380)", rule: "private" },
  { prefix: "2001:1::1/128", name: "Port Control Protocol Anycast (RFC 7723)", rule: "private" },
  { prefix: "2001:1::2/128", name: "Traversal Using Relays around NAT Anycast (RFC 8155)", rule: "private" },
  { prefix: "2001:1::3/128", name: "DNS-SD Service Registration Protocol Anycast (RFC 9665)", rule: "private" },
  { prefix: "2001:2::/48", name: "Benchmarking (RFC 5180)", rule: "private" },
  { prefix: "2001:3::/32", name: "AMT (RFC 7450)", rule: "private" },
  { prefix: "2001:4:112::/48", name: "AS112-v6 (RFC 7535)", rule: "private" },
  { prefix: "2001:10::/28", name: "Deprecated ORCHID (RFC 4843)", rule: "private" },
  { prefix: "2001:20::/28", name: "ORCHIDv2 (RFC 7343)", rule: "private" },
  { prefix: "2001:30::/28", name: "Drone Remote ID Protocol Entity Tags (RFC 9374)", rule: "private" },
  { prefix: "2001::/23", name: "IETF Protocol Assignments (RFC 2928)", rule: "private" },
  { prefix: "2001:db8::/32", name: "Documentation (RFC 3849)", rule: "private" },
  { prefix: "2002::/16", name: "6to4, bits 16-47 the IPv4 of the relay (RFC 3056)", rule: { embedded: "6to4", translated: true } },
  { prefix: "2620:4f:8000::/48", name: "Direct Delegation AS112 Service (RFC 7534)", rule: "private" },
  { prefix: "3fff::/20", name: "Documentation (RFC 9637)", rule: "private" },
  { prefix: "5f00::/16", name: "Segment Routing (SRv6) SIDs (RFC 9602)", rule: "private" },
  { prefix: "fc00::/7", name: "Unique-Local (RFC 4193)", rule: "private" },
  { prefix: "fe80::/10", name: "Link-Local Unicast (RFC 4291)", rule: "private" },
  { prefix: "fec0::/10", name: "Site-Local, deprecated (RFC 3879)", rule: "private" },
  { prefix: "ff00::/8", name: "Multicast (RFC 4291)", rule: "private" },
];

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
  const groups = [...headGroups, ...Array<number>(missing).fill(0), ...tailGroups];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : undefined;
}

/** An address as a number of its family's width (32 or 128 bits). */
function ipv4Bits(address: string): bigint {
  return address.split(".").reduce((bits, octet) => (bits << 8n) | BigInt(Number(octet)), 0n);
}
const ipv6Bits = (groups: readonly number[]): bigint => groups.reduce((bits, group) => (bits << 16n) | BigInt(group), 0n);

interface CompiledRange {
  family: 4 | 6;
  base: bigint;
  mask: bigint;
  range: SpecialPurposeRange;
}

const compiledRanges: CompiledRange[] = specialPurposeRanges.map((range) => {
  const [address = "", length = "0"] = range.prefix.split("/");
  const family = address.includes(":") ? 6 : 4;
  const width = family === 6 ? 128n : 32n;
  const all = (1n << width) - 1n;
  const mask = all ^ ((1n << (width - BigInt(Number(length)))) - 1n);
  const groups = family === 6 ? ipv6Groups(address) : undefined;
  const base = (family === 6 ? ipv6Bits(groups ?? []) : ipv4Bits(address)) & mask;
  return { family, base, mask, range };
});

/** The special-purpose range an address falls in (the first row that holds it), if any. */
export function specialPurposeRangeOf(address: string): SpecialPurposeRange | undefined {
  const bare = address.replace(/^\[(.*)\]$/, "$1");
  const family = isIPv4(bare) ? 4 : isIPv6(bare) ? 6 : undefined;
  if (family === undefined) return undefined;
  const groups = family === 6 ? ipv6Groups(bare) : undefined;
  if (family === 6 && !groups) return undefined;
  const bits = family === 6 ? ipv6Bits(groups ?? []) : ipv4Bits(bare);
  return compiledRanges.find((entry) => entry.family === family && (bits & entry.mask) === entry.base)?.range;
}

/** a.b.c.d from a 32-bit number. */
const dottedOf = (bits: bigint) => [24n, 16n, 8n, 0n].map((shift) => Number((bits >> shift) & 0xffn)).join(".");

function classOf(address: string): AddressClass {
  const range = specialPurposeRangeOf(address);
  if (!range) return "public";
  if (typeof range.rule === "string") return range.rule;
  const bits = ipv6Bits(ipv6Groups(address) ?? []);
  const embedded = dottedOf(range.rule.embedded === "6to4" ? (bits >> 80n) & 0xffffffffn : bits & 0xffffffffn);
  const found = classOf(embedded);
  // An embedded loopback behind a translator or tunnel is another host's loopback: never admitted.
  return range.rule.translated && found !== "public" ? "private" : found;
}

/** Class of a literal IP address (IPv4 or IPv6, brackets allowed); undefined when it is not an IP. */
export function addressClass(address: string): AddressClass | undefined {
  const bare = address.replace(/^\[(.*)\]$/, "$1");
  if (isIPv4(bare)) return classOf(bare);
  if (isIPv6(bare)) return ipv6Groups(bare) ? classOf(bare.split("%")[0] ?? bare) : "private";
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
