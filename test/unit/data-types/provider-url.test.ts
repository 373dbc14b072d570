import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addressClass, isDisallowedAddress, providerUrlProblem } from "#shared/domain/data-types/provider-url";

describe("Function: providerUrlProblem", () => {
  it.each([
    ["https://api.example.com/items", true],
    ["http://api.example.com:8080/items?q=1", true],
    ["https://8.8.8.8/x", true],
    ["https://[2606:4700:4700::1111]/x", true],
    ["https://172.32.0.1/x", true],
    ["not a url", false],
    ["/relative/path", false],
    ["ftp://example.com/file", false],
    ["file:///etc/passwd", false],
    ["https://user:pass@api.example.com/", false],
    ["http://localhost:3000/", false],
    ["http://LOCALHOST./", false],
    ["http://api.localhost/", false],
    ["http://127.0.0.1/", false],
    ["http://127.1.2.3/", false],
    ["http://2130706433/", false], // decimal form of 127.0.0.1
    ["http://0x7f000001/", false], // hex form of 127.0.0.1
    ["http://0.0.0.0/", false],
    ["http://10.1.2.3/", false],
    ["http://172.16.0.1/", false],
    ["http://172.31.255.255/", false],
    ["http://192.168.0.10/", false],
    ["http://100.64.0.1/", false],
    ["http://169.254.169.254/latest/meta-data/", false],
    ["http://224.0.0.1/", false],
    ["http://[::1]/", false],
    ["http://[::]/", false],
    ["http://[fe80::1]/", false],
    ["http://[febf::1]/", false],
    ["http://[fd00::1]/", false],
    ["http://[::ffff:127.0.0.1]/", false],
    ["http://[::ffff:169.254.169.254]/", false],
    ["http://[::ffff:a9fe:a9fe]/", false],
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) embed an IPv4 address: judged by it.
    ["http://[64:ff9b::a9fe:a9fe]/", false],
    ["http://[64:ff9b::169.254.169.254]/", false],
    ["http://[64:ff9b::a00:1]/", false],
    ["http://[64:ff9b::7f00:1]/", false],
    ["http://[64:ff9b::808:808]/", true],
    ["http://[64:ff9b:1::a9fe:a9fe]/", false], // local-use NAT64 (64:ff9b:1::/48)
    ["http://[2002:a9fe:a9fe::]/", false],
    ["http://[2002:a9fe:a9fe:1::1]/", false],
    ["http://[2002:c0a8:1::]/", false],
    ["http://[2002:7f00:1::]/", false],
    ["http://[2002:808:808::1]/", true],
    ["http://[::ffff:0:a9fe:a9fe]/", false], // IPv4-translated (::ffff:0:0/96)
  ])("%s → accepted=%s", (url, accepted) => {
    expect(providerUrlProblem(url) === undefined).toBe(accepted);
  });

  it("allows loopback (and only loopback) when the test-only switch is on", () => {
    expect(providerUrlProblem("http://127.0.0.1:4000/x", { allowLoopback: true })).toBeUndefined();
    expect(providerUrlProblem("http://localhost:4000/x", { allowLoopback: true })).toBeUndefined();
    expect(providerUrlProblem("http://[::1]:4000/x", { allowLoopback: true })).toBeUndefined();
    expect(providerUrlProblem("http://10.0.0.1/x", { allowLoopback: true })).toBeDefined();
    expect(providerUrlProblem("http://169.254.169.254/x", { allowLoopback: true })).toBeDefined();
  });
});

describe("Function: isDisallowedAddress (fetch-side re-check of resolved addresses)", () => {
  it.each([
    ["93.184.216.34", false],
    ["2606:4700::6810:85e5", false],
    ["127.0.0.1", true],
    ["10.0.0.1", true],
    ["fe80::abcd", true],
    ["::ffff:10.0.0.1", true],
    ["64:ff9b::a9fe:a9fe", true],
    ["64:ff9b::7f00:1", true],
    ["2002:a9fe:a9fe::", true],
    ["2002:7f00:1::1", true],
    ["64:ff9b::808:808", false],
    ["2002:808:808::1", false],
    ["not-an-ip", true],
  ])("%s → disallowed=%s", (address, disallowed) => {
    expect(isDisallowedAddress(address)).toBe(disallowed);
  });

  it("property: every 10.x, 127.x, 169.254.x and 192.168.x address is refused, in IPv4 and IPv4-mapped IPv6 form", () => {
    const octet = fc.integer({ min: 0, max: 255 });
    const privateV4 = fc.oneof(
      fc.tuple(fc.constant(10), octet, octet, octet),
      fc.tuple(fc.constant(127), octet, octet, octet),
      fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
      fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
    );
    fc.assert(
      fc.property(privateV4, (parts) => {
        const address = parts.join(".");
        expect(isDisallowedAddress(address)).toBe(true);
        expect(isDisallowedAddress(`::ffff:${address}`)).toBe(true);
        expect(providerUrlProblem(`http://${address}/`)).toBeDefined();
        expect(providerUrlProblem(`http://[::ffff:${address}]/`)).toBeDefined();
      }),
    );
  });

  it("loopback embedded in NAT64/6to4 is not the local loopback: refused even with the test-only switch", () => {
    expect(isDisallowedAddress("64:ff9b::7f00:1", { allowLoopback: true })).toBe(true);
    expect(isDisallowedAddress("2002:7f00:1::", { allowLoopback: true })).toBe(true);
    expect(providerUrlProblem("http://[64:ff9b::127.0.0.1]/", { allowLoopback: true })).toBeDefined();
  });

  it("classifies literals only", () => {
    expect(addressClass("example.com")).toBeUndefined();
    expect(addressClass("[::1]")).toBe("loopback");
  });
});
