import type { core } from "zod/mini";

type Def = { type: string; [key: string]: unknown };

/** A zod schema's definition (zod keeps it on `_zod.def`; the mini build has no public accessor). */
export const defOf = (schema: core.$ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * Every schema of the given zod types reachable from a schema (objects, arrays, sets, unions,
 * intersections, records, maps, tuples, pipes, lazy, wrappers), with its path. Iterative, and each
 * schema visited once, so recursive (lazy) schemas end. The schema-wide rule tests (text, number)
 * walk every route's schemas with it.
 */
export function schemasOfType(root: core.$ZodType, types: readonly string[]): Array<{ path: string; schema: core.$ZodType }> {
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
    if (types.includes(def.type)) {
      found.push({ path: path || "(root)", schema });
      continue;
    }
    switch (def.type) {
      case "object":
        for (const [key, child] of Object.entries(def.shape as Record<string, core.$ZodType>)) visit(child, path ? `${path}.${key}` : key);
        visit(def.catchall, `${path}.*`);
        break;
      case "array":
        visit(def.element, `${path}[]`);
        break;
      case "set":
        visit(def.valueType, `${path}[]`);
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
      case "tuple":
        (def.items as core.$ZodType[]).forEach((item, index) => {
          visit(item, `${path}[${index}]`);
        });
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
      case "promise":
        visit(def.innerType, path);
        break;
      default:
        // boolean, enum, literal, unknown, any, transform, custom, …: no nested schemas
        break;
    }
  }
  return found;
}
