import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import type { core } from "zod/mini";
import { routes } from "../../../functions/routes.ts";
import { defOf, schemasOfType } from "../../support/schema-walk.ts";
import { clientFreeText, clientText, textProblem, usesTextRule } from "#shared/domain/schemas";

/** Every zod string schema reachable from a schema, with its path. */
const stringSchemas = (root: core.$ZodType) => schemasOfType(root, ["string"]);

/**
 * A string whose pattern only lists allowed characters (no `.`, no negated class, no `\p`/`\S`/`\W`/`\D`
 * escapes that admit control or bidi characters) cannot carry what the text rule refuses.
 */
function closedPattern(schema: core.$ZodType): boolean {
  const checks = (defOf(schema).checks ?? []) as Array<{ _zod: { def: { pattern?: RegExp } } }>;
  return checks.some((check) => {
    const pattern = check._zod.def.pattern;
    if (!pattern) return false;
    const source = pattern.source.replace(/\\\\./g, "");
    return !/(^|[^\\])\.|\[\^|\\[pPSWD]/.test(source);
  });
}

const hostile = ["a\u0000b", "a\u001bb", "a\u0085b", "a\u202eb", "a\u2066b", "a\u200fb", "a\ud800b", "a\udc00", "\ud83d"];

describe("Module: the one text rule", () => {
  it.each(hostile)("clientText and clientFreeText refuse %j", (value) => {
    expect(textProblem(value)).toBeDefined();
    expect(z.string().check(clientText).safeParse(value).success).toBe(false);
    expect(z.string().check(clientFreeText).safeParse(value).success).toBe(false);
  });

  it("accepts any other Unicode text: letters of every script, emoji (a valid surrogate pair), Arabic and Hebrew names", () => {
    for (const value of ["Depot Nord", "Gudang Jakarta Timur", "東京倉庫", "Ünïcödé 🚚", "مستودع", "מחסן", "tab\u00a0nbsp"]) {
      expect(textProblem(value), value).toBeUndefined();
    }
  });

  it("free text may hold tab, line feed and carriage return; names may not", () => {
    expect(z.string().check(clientFreeText).safeParse("line 1\r\nline 2\tend").success).toBe(true);
    expect(z.string().check(clientText).safeParse("line 1\nline 2").success).toBe(false);
  });

  it("every string of every route's body, query and path parameters carries the text rule (or a pattern of allowed characters only)", () => {
    const strings = routes.flatMap((route) =>
      (["body", "query", "params"] as const).flatMap((part) => {
        const schema = route[part];
        return schema
          ? stringSchemas(schema).map((entry) => ({
              name: `${route.operationId} ${part}: ${entry.path}`,
              ruled: usesTextRule(entry.schema) || closedPattern(entry.schema),
            }))
          : [];
      }),
    );
    // The walk reaches names, ids, titles, tags and extension entity ids at every depth.
    expect(strings.map((entry) => entry.name)).toEqual(
      expect.arrayContaining([
        "createHub body: name",
        "createVisit body: name",
        "createVehicle body: name",
        "createDataType body: fields[].title",
        "listVehicles query: cursor",
      ]),
    );
    expect(strings.filter((entry) => !entry.ruled).map((entry) => entry.name)).toEqual([]);
  });
});
