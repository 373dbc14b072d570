import { describe, expect, it } from "vitest";
import type { core } from "zod/mini";
import { routes } from "../../../functions/routes.ts";
import { schemasOfType } from "../../support/schema-walk.ts";
import { storableNumber, usesStorableNumberRule } from "#shared/domain/schemas";

/** Every zod number schema reachable from a schema, with its path. */
const numberSchemas = (root: core.$ZodType) => schemasOfType(root, ["number", "bigint"]);

describe("Module: the one number rule", () => {
  it("finds numbers anywhere in a schema tree, and tells the rule's numbers from others", async () => {
    const { z: zod } = await import("zod/mini");
    const schema = zod.strictObject({
      a: zod.optional(storableNumber().check(zod.minimum(0))),
      b: zod.array(zod.union([zod.string(), zod.number()])),
      c: zod.pipe(zod.pipe(zod.string(), zod.transform(Number)), storableNumber().check(zod.int())),
      d: storableNumber({ coerce: true }),
    });
    const numbers = numberSchemas(schema);
    expect(numbers.map((entry) => [entry.path, usesStorableNumberRule(entry.schema)]).sort()).toEqual([
      ["a", true],
      ["b[]", false],
      ["c", true],
      ["d", true],
    ]);
  });

  it("every numeric schema of every route's body, query and path parameters uses storableNumber()", () => {
    const numbers = routes.flatMap((route) =>
      (["body", "query", "params"] as const).flatMap((part) => {
        const schema = route[part];
        return schema
          ? numberSchemas(schema).map((entry) => ({
              name: `${route.operationId} ${part}: ${entry.path}`,
              ruled: usesStorableNumberRule(entry.schema),
            }))
          : [];
      }),
    );
    // The walk reaches numbers at every depth and through the "lat,lng" text form's pipe.
    expect(numbers.map((entry) => entry.name)).toEqual(
      expect.arrayContaining([
        "createHub body: lat",
        "patchHub body: lng",
        "createVisit body: coordinate.lat",
        "createVehicle body: fixedCost",
        "listVehicles query: limit",
      ]),
    );
    expect(numbers.filter((entry) => !entry.ruled).map((entry) => entry.name)).toEqual([]);
  });

  it.each([1e-200, 5e-324, -1e-131, 2 ** 53, 1e300])("storableNumber() refuses %s, which the store cannot keep", (value) => {
    expect(storableNumber().safeParse(value).success).toBe(false);
  });

  it.each([0, 1e-130, -90, Number.MAX_SAFE_INTEGER, 0.1234567890123456])("storableNumber() accepts %s", (value) => {
    expect(storableNumber().safeParse(value).success).toBe(true);
  });
});
