import { describe, expect, it } from "vitest";
import type { core } from "zod/mini";
import { configurationPatchSchema, writableConfigurationFields } from "#shared/domain/configurations/schema";
import { hubPatchSchema, writableHubFields } from "#shared/domain/hubs/schema";
import { schedulePatchSchema, writableScheduleFields } from "#shared/domain/schedules/schema";
import { writableKeysOf } from "#shared/domain/schemas";
import { vehiclePatchSchema, writableVehicleFields } from "#shared/domain/vehicles/schema";
import { visitPatchSchema, writableVisitFields } from "#shared/domain/visits/schema";

/** The object a PATCH body is parsed by: the schema behind ignoringServerSetKeys' pipe. */
function patchObjectKeys(schema: core.$ZodType): string[] {
  const def = schema._zod.def as { out?: core.$ZodType; shape?: Record<string, unknown> };
  if (def.shape) return Object.keys(def.shape);
  if (def.out) return patchObjectKeys(def.out);
  throw new Error("no object behind the PATCH schema");
}

describe("PATCH merges", () => {
  it("writableKeysOf lists an object's keys but the excepted ones", () => {
    expect(writableKeysOf({ shape: { a: 1, b: 2, custom: 3 } }, ["custom"])).toEqual(["a", "b"]);
  });

  // A field a PATCH may send but the merge does not carry over would be reset by every PATCH
  // that does not send it; a merged field a PATCH may not send could never be changed by one.
  it.each([
    ["hubs", hubPatchSchema, writableHubFields],
    ["vehicles", vehiclePatchSchema, writableVehicleFields],
    ["visits", visitPatchSchema, writableVisitFields],
    ["configurations", configurationPatchSchema, writableConfigurationFields],
    ["schedules", schedulePatchSchema, writableScheduleFields],
  ] as const)(
    "%s: the fields merged over the stored entity are the fields a PATCH may send (custom values apart)",
    (_area, patchSchema, writable) => {
      expect([...writable].sort()).toEqual(
        patchObjectKeys(patchSchema)
          .filter((key) => key !== "custom")
          .sort(),
      );
    },
  );
});
