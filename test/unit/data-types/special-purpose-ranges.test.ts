import { describe, expect, it } from "vitest";
import { addressClass, specialPurposeRangeOf, specialPurposeRanges } from "#shared/domain/data-types/provider-url";
import { webhookUrlProblem } from "#shared/domain/webhooks/service";

/** The first and last address of a CIDR prefix, as text. */
function bounds(prefix: string): [string, string] {
  const [address = "", length = "0"] = prefix.split("/");
  const v6 = address.includes(":");
  const width = v6 ? 128n : 32n;
  let bits: bigint;
  if (v6) {
    const [head = "", tail = ""] = address.split("::");
    const part = (text: string) => (text ? text.split(":").map((group) => Number.parseInt(group, 16)) : []);
    const groups = [...part(head), ...Array<number>(8 - part(head).length - part(tail).length).fill(0), ...part(tail)];
    bits = groups.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
  } else bits = address.split(".").reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
  const host = (1n << (width - BigInt(Number(length)))) - 1n;
  const text = (value: bigint) =>
    v6
      ? Array.from({ length: 8 }, (_, i) => ((value >> BigInt((7 - i) * 16)) & 0xffffn).toString(16)).join(":")
      : Array.from({ length: 4 }, (_, i) => ((value >> BigInt((3 - i) * 8)) & 0xffn).toString()).join(".");
  return [text(bits & ~host), text(bits | host)];
}

const rowIndex = (found: unknown) => specialPurposeRanges.indexOf(found as (typeof specialPurposeRanges)[number]);

describe("The special-purpose address table (IANA IPv4 and IPv6 registries)", () => {
  it.each(specialPurposeRanges.map((range) => [range.prefix, range] as const))("%s: its first and last address are refused", (_, range) => {
    const index = specialPurposeRanges.indexOf(range);
    for (const address of bounds(range.prefix)) {
      const found = specialPurposeRangeOf(address);
      // The row itself, or a more specific row listed before it.
      expect(found, address).toBeDefined();
      expect(rowIndex(found), address).toBeLessThanOrEqual(index);
      if (typeof range.rule === "string" && rowIndex(found) === index) expect(addressClass(address), address).toBe(range.rule);
      else expect(addressClass(address), address).not.toBe("public");
      const url = `https://${address.includes(":") ? `[${address}]` : address}/hook`;
      expect(webhookUrlProblem(url, false), url).toBeDefined();
    }
  });

  it("forms that embed an IPv4 address are judged by it; behind NAT64, 6to4 or translation a loopback is refused even where loopback is allowed", () => {
    expect(addressClass("::ffff:8.8.8.8")).toBe("public");
    expect(addressClass("::ffff:127.0.0.1")).toBe("loopback");
    expect(addressClass("::ffff:192.0.2.1")).toBe("private");
    expect(addressClass("::8.8.8.8")).toBe("public");
    expect(addressClass("::10.0.0.1")).toBe("private");
    expect(addressClass("64:ff9b::8.8.8.8")).toBe("public");
    expect(addressClass("64:ff9b::127.0.0.1")).toBe("private");
    expect(addressClass("64:ff9b::198.51.100.7")).toBe("private");
    expect(addressClass("::ffff:0:127.0.0.1")).toBe("private");
    expect(addressClass("2002:808:808::1")).toBe("public");
    expect(addressClass("2002:7f00:1::1")).toBe("private");
    expect(addressClass("2002:c058:6301::1")).toBe("private"); // the 6to4 relay anycast itself
  });

  it("ordinary public addresses next to the ranges stay public", () => {
    for (const address of [
      "8.8.8.8",
      "192.0.3.1",
      "198.51.101.1",
      "203.0.114.1",
      "192.88.100.1",
      "2001:200::1",
      "2001:db9::1",
      "2606:4700::1111",
    ])
      expect(addressClass(address), address).toBe("public");
  });
});
