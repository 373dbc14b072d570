import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { vehicleInputSchema, vehiclePatchSchema } from "#shared/domain/vehicles/schema";

const base = { name: "Van", hubId: "h1" };
const time = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
  .map(([h, m]) => `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`);
const toMinutes = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3));

describe("Schema: vehicle input", () => {
  it("applies the documented defaults", () => {
    expect(vehicleInputSchema.parse(base)).toEqual({
      ...base,
      type: "car",
      plateNumber: null,
      assignee: null,
      capacity: {},
      speed: 25,
      workingTime: { startTime: "08:00", endTime: "17:00", multiday: 0 },
      breakTime: null,
      tags: [],
      fixedCost: 0,
      startLocation: null,
      endLocation: null,
      constraints: {},
    });
  });

  it.each([
    ["a break inside a day shift", { startTime: "08:00", endTime: "17:00", multiday: 0 }, { startTime: "12:00", endTime: "13:00" }, true],
    [
      "a break touching both shift edges",
      { startTime: "08:00", endTime: "17:00", multiday: 0 },
      { startTime: "08:00", endTime: "17:00" },
      true,
    ],
    ["a break after the shift", { startTime: "08:00", endTime: "17:00", multiday: 0 }, { startTime: "17:00", endTime: "17:30" }, false],
    ["a break before the shift", { startTime: "08:00", endTime: "17:00", multiday: 0 }, { startTime: "07:00", endTime: "07:30" }, false],
    [
      "a night-shift break after midnight",
      { startTime: "22:00", endTime: "06:00", multiday: 1 },
      { startTime: "02:00", endTime: "02:30" },
      true,
    ],
    [
      "a night-shift break across midnight",
      { startTime: "22:00", endTime: "06:00", multiday: 1 },
      { startTime: "23:45", endTime: "00:15" },
      true,
    ],
    [
      "a night-shift break after it ends",
      { startTime: "22:00", endTime: "06:00", multiday: 1 },
      { startTime: "07:00", endTime: "07:30" },
      false,
    ],
    [
      "a two-day shift with a break on day two",
      { startTime: "08:00", endTime: "17:00", multiday: 1 },
      { startTime: "07:00", endTime: "07:30" },
      true,
    ],
  ])("%s → valid=%s", (_case, workingTime, breakTime, valid) => {
    expect(vehicleInputSchema.safeParse({ ...base, workingTime, breakTime }).success).toBe(valid);
  });

  it("property: a same-day break is accepted exactly when it lies inside the working time", () => {
    fc.assert(
      fc.property(time, time, time, time, (ws, we, bs, be) => {
        fc.pre(toMinutes(ws) < toMinutes(we) && toMinutes(bs) < toMinutes(be));
        const inside = toMinutes(bs) >= toMinutes(ws) && toMinutes(be) <= toMinutes(we);
        const result = vehicleInputSchema.safeParse({
          ...base,
          workingTime: { startTime: ws, endTime: we },
          breakTime: { startTime: bs, endTime: be },
        });
        expect(result.success).toBe(inside);
      }),
    );
  });

  it("property: capacity is valid exactly when 0 ≤ min ≤ max", () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 50 }), fc.integer({ min: -5, max: 50 }), (min, max) => {
        const result = vehicleInputSchema.safeParse({ ...base, capacity: { weight: { min, max } } });
        expect(result.success).toBe(min >= 0 && max >= 0 && min <= max);
      }),
    );
  });

  it("PATCH accepts any subset but not unknown fields or an empty object", () => {
    expect(vehiclePatchSchema.safeParse({ speed: 30 }).success).toBe(true);
    expect(vehiclePatchSchema.safeParse({}).success).toBe(false);
    expect(vehiclePatchSchema.safeParse({ _id: "x" }).success).toBe(false);
  });
});
