import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  comparableValue,
  normalizeDateTimeValue,
  parseDateTimeValue,
  parseDateValue,
  parseTimeValue,
} from "#shared/domain/data-types/values";

describe("Functions: literal values of typed fields", () => {
  it.each([
    ["2026-01-31", true],
    ["2024-02-29", true],
    ["2026-02-29", false],
    ["2026-13-01", false],
    ["2026-1-01", false],
    ["2026-01-01T00:00", false],
  ])("date %s → valid=%s", (text, valid) => {
    expect(parseDateValue(text) !== undefined).toBe(valid);
  });

  it.each([
    ["2026-01-31 08:30", true],
    ["2026-01-31 08:30:15", true],
    ["2026-01-31T08:30:15.123Z", true],
    ["2026-01-31T08:30:15+07:00", true],
    ["2026-01-31", false],
    ["2026-01-31 25:00", false],
    ["31/01/2026 08:30", false],
    ["2026-02-29 08:30", false],
    ["2024-02-29 08:30", true],
    ["0000-02-29 08:30", true],
    ["2026-01-31 24:00", true],
    ["2026-01-31 24:01", false],
    ["2026-01-31 08:60", false],
    ["2026-01-31 08:30:60", false],
  ])("dateTime %s → valid=%s", (text, valid) => {
    expect(parseDateTimeValue(text) !== undefined).toBe(valid);
  });

  it.each([
    ["00:00", true],
    ["23:59:59", true],
    ["24:00", false],
    ["7:00", false],
    ["12:60", false],
  ])("time %s → valid=%s", (text, valid) => {
    expect(parseTimeValue(text) !== undefined).toBe(valid);
  });

  it.each([
    ["2026-01-31 08:30", "2026-01-31 08:30:00"],
    ["2026-01-31 08:30:15", "2026-01-31 08:30:15"],
    ["2026-01-31T08:30", "2026-01-31 08:30:00"],
    ["2026-01-31T08:30:15.999Z", "2026-01-31 08:30:15"],
    ["2026-01-31T01:30:15+07:00", "2026-01-30 18:30:15"],
    ["2026-01-31T23:30-02:30", "2026-02-01 02:00:00"],
    ["2026-01-31 24:00", "2026-02-01 00:00:00"],
    ["0099-12-31T23:59:59.999999Z", "0099-12-31 23:59:59"],
    ["9999-12-31T23:00-02:00", "10000-01-01 01:00:00"],
    ["31/01/2026 08:30", undefined],
  ])("normalizes dateTime %s to %s (the stored form, UTC)", (text, stored) => {
    expect(normalizeDateTimeValue(text)).toBe(stored);
  });

  it("treats a date-time without offset as UTC", () => {
    expect(parseDateTimeValue("2026-01-01 10:00:00")).toBe(parseDateTimeValue("2026-01-01T10:00:00Z"));
    expect(parseDateTimeValue("2026-01-01T11:00:00+01:00")).toBe(parseDateTimeValue("2026-01-01T10:00:00Z"));
  });

  it("property: the stored form of a UTC date-time is the date-time itself", () => {
    const instant = fc.date({ min: new Date("0000-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true });
    fc.assert(
      fc.property(instant, (date) => {
        const text = date.toISOString();
        expect(normalizeDateTimeValue(text)).toBe(`${text.slice(0, 10)} ${text.slice(11, 19)}`);
        expect(parseDateTimeValue(text)).toBe(date.getTime());
      }),
    );
  });

  it("number bounds are JSON numbers, not numeric text", () => {
    expect(comparableValue("number", 3.5)).toBe(3.5);
    expect(comparableValue("number", "3.5")).toBeUndefined();
    expect(comparableValue("date", 20260101)).toBeUndefined();
  });

  it("property: comparable dates order like the calendar", () => {
    const day = fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("2200-12-31T00:00:00Z"), noInvalidDate: true });
    fc.assert(
      fc.property(day, day, (a, b) => {
        const [ta, tb] = [a.toISOString().slice(0, 10), b.toISOString().slice(0, 10)];
        expect(Math.sign((comparableValue("date", ta) ?? 0) - (comparableValue("date", tb) ?? 0))).toBe(Math.sign(ta.localeCompare(tb)));
      }),
    );
  });
});
