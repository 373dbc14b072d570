import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { routes } from "../../../functions/routes.ts";
import { ValidationError } from "#shared/domain/errors";
import { storableNumber } from "#shared/domain/schemas";
import { parseWith } from "#shared/domain/validation";
import { visitCreateSchema } from "#shared/domain/visits/schema";

/** Words of the validation library's own messages that must never reach a client. */
const LIBRARY_WORDS = /Invalid input|expected|received|Invalid option|Too (big|small)|Unrecognized/i;

function errorsOf(schema: z.core.$ZodType, value: unknown): Array<{ field: string; message: string }> {
  try {
    parseWith(schema, value);
    return [];
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return error.errors;
  }
}

describe("Module: validation messages", () => {
  it.each<[string, z.core.$ZodType, unknown, Array<{ field: string; message: string }>]>([
    ["a missing field", z.strictObject({ name: z.string() }), {}, [{ field: "name", message: "name is required." }]],
    ["a wrong type", z.strictObject({ lat: z.number() }), { lat: "x" }, [{ field: "lat", message: "lat must be a number." }]],
    ["null for a number", z.strictObject({ lat: z.number() }), { lat: null }, [{ field: "lat", message: "lat must be a number." }]],
    [
      "a coerced NaN",
      z.strictObject({ limit: z.coerce.number() }),
      { limit: "abc" },
      [{ field: "limit", message: "limit must be a number." }],
    ],
    [
      "a fraction for an integer",
      z.strictObject({ n: z.number().check(z.int()) }),
      { n: 1.5 },
      [{ field: "n", message: "n must be a whole number." }],
    ],
    [
      "an enum",
      z.strictObject({ status: z.enum(["A", "B"]) }),
      { status: "C" },
      [{ field: "status", message: "status must be one of A, B." }],
    ],
    ["a literal", z.strictObject({ v: z.literal(3) }), { v: 4 }, [{ field: "v", message: "v must be 3." }]],
    [
      "a number too big",
      z.strictObject({ lat: z.number().check(z.maximum(90)) }),
      { lat: 91 },
      [{ field: "lat", message: "lat must be at most 90." }],
    ],
    [
      "a number not positive",
      z.strictObject({ n: z.number().check(z.positive()) }),
      { n: 0 },
      [{ field: "n", message: "n must be greater than 0." }],
    ],
    [
      "an empty string",
      z.strictObject({ name: z.string().check(z.minLength(1)) }),
      { name: "" },
      [{ field: "name", message: "name must not be empty." }],
    ],
    [
      "a long string",
      z.strictObject({ name: z.string().check(z.maxLength(3)) }),
      { name: "abcd" },
      [{ field: "name", message: "name must have at most 3 characters." }],
    ],
    [
      "a long array",
      z.strictObject({ tags: z.array(z.string()).check(z.maxLength(1)) }),
      { tags: ["a", "b"] },
      [{ field: "tags", message: "tags must have at most 1 item." }],
    ],
    [
      "a regex without a message",
      z.strictObject({ code: z.string().check(z.regex(/^a$/)) }),
      { code: "b" },
      [{ field: "code", message: "code does not have the required format." }],
    ],
    [
      "a schema's own message",
      z.strictObject({ id: z.string().check(z.regex(/^a$/, "must be the letter a")) }),
      { id: "b" },
      [{ field: "id", message: "id must be the letter a." }],
    ],
    [
      "a multiple",
      z.strictObject({ n: z.number().check(z.multipleOf(5)) }),
      { n: 3 },
      [{ field: "n", message: "n must be a multiple of 5." }],
    ],
    ["an unknown key", z.strictObject({ a: z.string() }), { a: "x", b: 1 }, [{ field: "b", message: "b is not a known field." }]],
    [
      "a union of types",
      z.strictObject({ v: z.union([z.number(), z.string()]) }),
      { v: true },
      [{ field: "v", message: "v must be a number or a string." }],
    ],
    [
      "a union branch's own rule",
      z.strictObject({ v: z.union([z.number(), z.string().check(z.maxLength(2))]) }),
      { v: "abc" },
      [{ field: "v", message: "v must have at most 2 characters." }],
    ],
    [
      "a refinement without a message",
      z.strictObject({ v: z.string().check(z.refine(() => false)) }),
      { v: "x" },
      [{ field: "v", message: "v is not valid." }],
    ],
    [
      "a record key",
      z.strictObject({ m: z.record(z.string().check(z.maxLength(1)), z.number()) }),
      { m: { bb: 1 } },
      [{ field: "m.bb", message: "m.bb is not an allowed key." }],
    ],
    [
      "a nested field",
      z.strictObject({ a: z.strictObject({ b: z.array(z.strictObject({ c: z.boolean() })) }) }),
      { a: { b: [{ c: 1 }] } },
      [{ field: "a.b.0.c", message: "a.b.0.c must be true or false." }],
    ],
    ["a body that is not an object", z.strictObject({ a: z.string() }), null, [{ field: "body", message: "body must be an object." }]],
    [
      "an unstorable number",
      z.strictObject({ lat: storableNumber().check(z.maximum(90)) }),
      { lat: 1e-200 },
      [{ field: "lat", message: "lat must be 0 or at least 1e-130 in magnitude." }],
    ],
  ])("words %s as a sentence", (_, schema, value, expected) => {
    const errors = errorsOf(schema, value);
    expect(errors).toEqual(expected);
    for (const error of errors) expect(error.message).not.toMatch(LIBRARY_WORDS);
  });

  it("lists every bad field of POST /visit in one answer: lat, status (ASSIGNED) and visitTime (eta, a dispatch field, is ignored)", () => {
    const errors = errorsOf(visitCreateSchema, {
      hubId: "h",
      name: "n",
      coordinate: { lat: "north", lng: 1 },
      status: "ASSIGNED",
      visitTime: "long",
      eta: "2026-01-01 10:00",
    });
    expect(errors.map((error) => error.field).sort()).toEqual(["coordinate", "status", "visitTime"]);
  });

  it("never answers with the library's words for hostile values of any route's body, query or parameters", () => {
    const hostile: unknown[] = [undefined, null, "x", "", 0, -1, 1.5, 1e-200, Number.NaN, true, [], [[]], {}, { a: 1 }, "9".repeat(400)];
    const offenders: string[] = [];
    for (const route of routes) {
      for (const part of ["body", "query", "params"] as const) {
        const schema = route[part];
        if (!schema) continue;
        const shape = (schema as unknown as { _zod: { def: { shape?: Record<string, unknown> } } })._zod.def.shape;
        const inputs: unknown[] = [...hostile];
        // Each top-level field alone set to each hostile value, and all of them at once.
        for (const key of Object.keys(shape ?? {})) for (const value of hostile) inputs.push({ [key]: value });
        for (const value of hostile) inputs.push(Object.fromEntries(Object.keys(shape ?? {}).map((key) => [key, value])));
        for (const input of inputs) {
          for (const error of errorsOf(schema, input)) {
            if (LIBRARY_WORDS.test(error.message) || !error.message.endsWith("."))
              offenders.push(`${route.operationId} ${part} ${JSON.stringify(input)?.slice(0, 60)}: ${error.field}: ${error.message}`);
          }
        }
      }
    }
    expect(offenders.slice(0, 20)).toEqual([]);
  }, 60_000);
});
