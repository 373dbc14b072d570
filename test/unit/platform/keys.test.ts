import { describe, expect, it } from "vitest";
import { keyPart, keys, withoutStorageAttributes } from "#shared/store/keys";

describe("Module: keys", () => {
  it("starts every tenant partition with the organization", () => {
    const built = [
      keys.dataType("o1", "d").PK,
      keys.record("o1", "d", "h", "x").PK,
      keys.uniqueGuard("o1", "d", "f", "h", "v").PK,
      keys.vehicle("o1", "v").PK,
      keys.vehiclesByHub("o1", "h"),
      keys.schedule("o1", "s").PK,
      keys.scheduleRunClaim("o1", "s", "2026-01-01T00:00").PK,
      keys.visit("o1", "h", "v").PK,
      keys.activeVisits("o1", "h"),
      keys.appIntegration("o1", "a").PK,
      keys.hub("o1", "h").PK,
      keys.configuration("o1", "c").PK,
      keys.configurationsByHub("o1", "h"),
      keys.visitsOfOrganization("o1"),
      keys.visitRef("o1", "v").PK,
      keys.routingResult("o1", "r").PK,
      keys.schedulesByConfiguration("o1", "c"),
    ];
    for (const key of built) expect(key.startsWith("ORG#o1")).toBe(true);
  });

  it("escapes # and % in user text so a value cannot forge another key segment", () => {
    expect(keyPart("a#b%c")).toBe("a%23b%25c");
    expect(keys.vehicle("evil#ORG#other", "v").PK).toBe("ORG#evil%23ORG%23other");
    // Two different organizations can never produce the same partition.
    expect(keys.vehicle("a#b", "v").PK).not.toBe(keys.vehicle("a%23b", "v").PK);
  });

  it("makes data type name guards case-insensitive", () => {
    expect(keys.dataTypeNameGuard("o", "Customers")).toEqual(keys.dataTypeNameGuard("o", "customers"));
  });

  it("strips storage attributes from items returned to clients", () => {
    expect(withoutStorageAttributes({ PK: "p", SK: "s", GSI1PK: "g", version: 3, expiresAt: 1, entity: "x", name: "n" })).toEqual({
      name: "n",
    });
  });
});
