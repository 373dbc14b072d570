import { describe, expect, it } from "vitest";
import { resultNameTime } from "#shared/domain/routing-results/service";

describe("Module: routing result name times", () => {
  it.each([
    ["2026-03-08T06:59:00Z", "America/New_York", "2026-03-08 01:59"],
    // The first minute after New York springs forward (02:00 EST does not exist).
    ["2026-03-08T07:00:00Z", "America/New_York", "2026-03-08 03:00"],
    // Midnight is 00, never 24.
    ["2026-11-24T17:00:00Z", "Asia/Jakarta", "2026-11-25 00:00"],
    ["2026-11-24T18:15:00Z", "Asia/Kathmandu", "2026-11-25 00:00"],
    ["2026-12-31T23:59:00Z", "UTC", "2026-12-31 23:59"],
  ])("%s in %s is %s", (instant, zone, expected) => {
    expect(resultNameTime(new Date(instant), zone)).toBe(expected);
  });

  it("reads an unknown zone as UTC instead of failing the run", () => {
    expect(resultNameTime(new Date("2026-05-01T10:30:00Z"), "Nowhere/Zone")).toBe("2026-05-01 10:30");
  });
});
