import { describe, expect, it } from "vitest";
import type { core } from "zod/mini";
import { routes } from "../../../functions/routes.ts";
import { storableNumber, usesStorableNumberRule } from "#shared/domain/schemas";

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: core.$ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * Every zod number schema reachable from a schema (objects, arrays, unions, wrappers, pipes, lazy,
 * records, tuples, intersections), with its path. Iterative, and each schema visited once.
 */
function numberSchemas(root: core.$ZodType): Array<{ path: string; schema: core.$ZodType }> {
  const found: Array<{ path: string; schema: core.$ZodType }> = [];
  const seen = new Set<core.$ZodType>();
  const pending: Array<[core.$ZodType, string]> = [[root, ""]];
  while (pending.length > 0) {
    const [schema, path] = pending.pop() as [core.$ZodType, string];
    if (seen.has(schema)) continue;
    seen.add(schema);
    const def = defOf(schema);
    const visit = (child: unknown, at: string) => {
      if (child) pending.push([child as core.$ZodType, at]);
    };
    switch (def.type) {
      case "number":
      case "bigint":
        found.push({ path: path || "(root)", schema });
        break;
      case "object":
        for (const [key, child] of Object.entries(def.shape as Record<string, core.$ZodType>)) visit(child, path ? `${path}.${key}` : key);
        visit(def.catchall, `${path}.*`);
        break;
      case "array":
        visit(def.element, `${path}[]`);
        break;
      case "union":
        for (const option of def.options as core.$ZodType[]) visit(option, path);
        break;
      case "intersection":
        visit(def.left, path);
        visit(def.right, path);
        break;
      case "record":
      case "map":
        visit(def.keyType, `${path}{key}`);
        visit(def.valueType, `${path}{value}`);
        break;
      case "set":
        visit(def.valueType, `${path}[]`);
        break;
      case "tuple":
        (def.items as core.$ZodType[]).forEach((item, index) => visit(item, `${path}[${index}]`));
        visit(def.rest, `${path}[…]`);
        break;
      case "pipe":
        visit(def.in, path);
        visit(def.out, path);
        break;
      case "lazy":
        visit((def.getter as () => core.$ZodType)(), path);
        break;
      case "optional":
      case "nullable":
      case "default":
      case "prefault":
      case "catch":
      case "readonly":
      case "nonoptional":
      case "success":
        visit(def.innerType, path);
        break;
      case "promise":
        visit(def.innerType, path);
        break;
      default:
        // string, boolean, enum, literal, unknown, any, transform, custom, …: no nested schemas
        break;
    }
  }
  return found;
}

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
        return schema ? numberSchemas(schema).map((entry) => ({ name: `${route.operationId} ${part}: ${entry.path}`, ruled: usesStorableNumberRule(entry.schema) })) : [];
      }),
    );
    // The walk reaches numbers at every depth and through the "lat,lng" text form's pipe.
    expect(numbers.map((entry) => entry.name)).toEqual(
      expect.arrayContaining(["createHub body: lat", "patchHub body: lng", "createVisit body: coordinate.lat", "createVehicle body: fixedCost", "listVehicles query: limit"]),
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
