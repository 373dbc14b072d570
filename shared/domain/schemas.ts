import * as z from "zod/mini";
import type { core } from "zod/mini";

/** Building blocks shared by the resource schemas. */

export const idSchema = z.string().check(z.regex(/^[0-9a-f]{24}$/, "must be a 24-character lowercase hex id"));

/** A wall-clock time of day, `HH:mm`, 00:00–23:59. */
export const timeOfDaySchema = z.string().check(z.regex(/^([01]\d|2[0-3]):[0-5]\d$/, "must be a time HH:mm between 00:00 and 23:59"));

export function minutesOfDay(time: string): number {
  const [hours, minutes] = time.split(":").map(Number);
  return (hours ?? 0) * 60 + (minutes ?? 0);
}

/**
 * Names `schema` as the OpenAPI component `id` (`components.schemas[id]`, used by `$ref`): zod's own
 * mechanism, the `id` of its metadata in `z.globalRegistry`, added to the metadata it already has
 * (a description, the server-set keys). Call it where the schema is declared, once per schema.
 */
export function component<T extends core.$ZodType>(id: string, schema: T): T {
  z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), id });
  return schema;
}

export const errorBodySchema = component(
  "Error",
  z.object({
    status: z.literal(false),
    message: z.string(),
    failedCode: z.string(),
    errors: z.optional(z.array(z.object({ field: z.string(), message: z.string() }))),
  }),
);

/** `{ status: true, message, data }` */
export function successBodySchema<T extends core.$ZodType>(data: T, key = "data") {
  return z.object({ status: z.literal(true), message: z.string(), [key]: data });
}

export function pageBodySchema<T extends core.$ZodType>(item: T, key = "data") {
  return z.object({ status: z.literal(true), message: z.string(), [key]: z.array(item), nextCursor: z.nullable(z.string()) });
}

/**
 * Numbers the store can write and read back: DynamoDB's number type holds magnitudes from 1e-130
 * to below 1e126 with 38 significant digits, and the document client (lib-dynamodb, default
 * options) refuses to write a number beyond ±Number.MAX_SAFE_INTEGER and would read one back as a
 * BigInt, so the upper bound is 2^53 − 1.
 */
export const MIN_STORABLE_MAGNITUDE = 1e-130;
export const MAX_STORABLE_MAGNITUDE = Number.MAX_SAFE_INTEGER;
export const MAX_SIGNIFICANT_DIGITS = 38;

/** Significant digits of a number as JSON writes it (the text the store sends). */
export function significantDigits(value: number): number {
  const [mantissa = ""] = String(Math.abs(value)).toLowerCase().split("e");
  return mantissa.replace(".", "").replace(/^0+/, "").replace(/0+$/, "").length;
}

/** Why the store cannot keep this finite number, or undefined. */
export function storableNumberProblem(value: number): string | undefined {
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && magnitude < MIN_STORABLE_MAGNITUDE) return "must be 0 or at least 1e-130 in magnitude";
  if (magnitude > MAX_STORABLE_MAGNITUDE) return `must be at most ${MAX_STORABLE_MAGNITUDE} in magnitude`;
  if (significantDigits(value) > MAX_SIGNIFICANT_DIGITS) return `must have at most ${MAX_SIGNIFICANT_DIGITS} significant digits`;
  return undefined;
}

/** The one check behind every client number (found by identity: see `usesStorableNumberRule`). */
const storableNumberCheck = z.superRefine<number>((value, ctx) => {
  const problem = storableNumberProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem, input: value });
});

/**
 * A finite number the store can keep: every number a client sends is built on this, so a value
 * DynamoDB or the document client would refuse is a 400 naming the field, never a 500. `coerce`
 * for query and path parameters (text); numbers parsed out of other text pipe into this schema.
 * test/unit/platform/number-rule.test.ts walks every route's schemas and fails on a number without it.
 */
export function storableNumber(): z.ZodMiniNumber<number>;
export function storableNumber(options: { coerce: true }): z.ZodMiniNumber<unknown>;
export function storableNumber(options: { coerce?: boolean } = {}): z.ZodMiniNumber<number> | z.ZodMiniNumber<unknown> {
  return options.coerce ? z.coerce.number().check(storableNumberCheck) : z.number().check(storableNumberCheck);
}

/** True when a zod number schema carries the storable-number rule (it survives checks added after it: `.check(z.int(), z.minimum(0))`). */
export function usesStorableNumberRule(schema: core.$ZodType): boolean {
  const checks = (schema as unknown as { _zod: { def: { checks?: unknown[] } } })._zod.def.checks ?? [];
  return checks.includes(storableNumberCheck);
}

/**
 * Characters no name or id a client sends may hold: C0 and C1 control characters (NUL, ESC, …;
 * free text may keep tab, line feed and carriage return), lone UTF-16 surrogates (not Unicode text:
 * JSON, XML and DynamoDB's UTF-8 cannot carry them faithfully) and the bidirectional formatting
 * characters (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069: "Trojan Source" reordering that makes a
 * name read differently from what it is).
 */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the text rule exists to find control characters
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the text rule exists to find control characters
const CONTROL_EXCEPT_LINE_BREAKS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/** Why `value` breaks the text rule, or undefined (`lineBreaks`: tab, LF and CR allowed, for free text). */
export function textProblem(value: string, options: { lineBreaks?: boolean } = {}): string | undefined {
  if ((options.lineBreaks ? CONTROL_EXCEPT_LINE_BREAKS : CONTROL).test(value)) return "must not contain control characters";
  if (LONE_SURROGATE.test(value)) return "must be valid Unicode text (no lone surrogates)";
  if (BIDI_CONTROL.test(value)) return "must not contain bidirectional formatting characters";
  return undefined;
}

/**
 * The one text rule: every string a client sends (names, ids, titles, tags, free text) carries one
 * of these two checks (found by identity: see `usesTextRule`), so a name can never break a log line,
 * an XML document (the route map SVG) or a terminal. test/unit/platform/text-rule.test.ts walks every
 * route's schemas and fails on a string without it (strings whose pattern already allows only
 * printable ASCII, such as ids and times, pass by their pattern).
 */
export const clientText = z.superRefine<string>((value, ctx) => {
  const problem = textProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem, input: value });
});
/** The rule for free text (descriptions, addresses, text values): tab, line feed and carriage return are allowed too. */
export const clientFreeText = z.superRefine<string>((value, ctx) => {
  const problem = textProblem(value, { lineBreaks: true });
  if (problem) ctx.addIssue({ code: "custom", message: problem, input: value });
});

/** True when a zod string schema carries the text rule (`clientText` or `clientFreeText`). */
export function usesTextRule(schema: core.$ZodType): boolean {
  const checks = (schema as unknown as { _zod: { def: { checks?: unknown[] } } })._zod.def.checks ?? [];
  return checks.includes(clientText) || checks.includes(clientFreeText);
}

/** Query parameters every list accepts (docs/api/README.md, Conventions). */
export const pageQuerySchema = z.strictObject({
  limit: z._default(storableNumber({ coerce: true }).check(z.int(), z.minimum(1), z.maximum(100)), 20),
  cursor: z.optional(z.string().check(clientText, z.minLength(1), z.maxLength(4096))),
});

export function pageQuery<T extends core.$ZodLooseShape>(filters: T) {
  return z.extend(pageQuerySchema, filters);
}

/**
 * Keys every stored resource answers but only the server sets. A client that sends back the body
 * it just read (read-modify-write) carries them; they are ignored, never stored.
 */
/**
 * The fields a PATCH merges over the stored entity: every key of the entity's input object but
 * `except` (fields merged their own way, such as extension `custom` values). Derived, so a field
 * added to the input schema is kept by every PATCH that does not send it.
 */
export function writableKeysOf<Shape extends core.$ZodLooseShape, Except extends keyof Shape & string = never>(
  object: { shape: Shape },
  except: readonly Except[] = [],
): ReadonlyArray<Exclude<keyof Shape & string, Except>> {
  return Object.keys(object.shape).filter(
    (key): key is Exclude<keyof Shape & string, Except> => !(except as readonly string[]).includes(key),
  );
}

export const serverSetKeys = ["_id", "organizationId", "createdBy", "createdTime", "updatedTime"] as const;

/** JSON Schema keyword carrying the ignored keys to the OpenAPI generator (shown there as readOnly properties). */
export const SERVER_SET_KEYWORD = "x-server-set-keys";

/**
 * One rule for every request body: the server-set keys (`serverSetKeys` plus the resource's own
 * `extraKeys`, e.g. `timeSchedules`, `locked`) are removed before `schema` parses, so they are
 * ignored and never stored, while any other key the strict `schema` does not know is still a 400.
 */
export function ignoringServerSetKeys<T extends core.$ZodType>(schema: T, extraKeys: readonly string[] = []) {
  const ignored = [...new Set<string>([...serverSetKeys, ...extraKeys])];
  return z
    .pipe(
      z.transform((input: unknown) => {
        if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
        const copy: Record<string, unknown> = { ...input };
        for (const key of ignored) delete copy[key];
        return copy;
      }),
      schema,
    )
    .check(z.meta({ [SERVER_SET_KEYWORD]: ignored }));
}

/**
 * An object schema that reads a `null` attribute as an absent one (then its default applies, or
 * "required" names it): clients and forms send null for "not set" on optional attributes.
 */
export function nullAsAbsent<T extends core.$ZodType>(schema: T) {
  return z.pipe(
    z.transform((input: unknown) => {
      if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
      return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null));
    }),
    schema,
  );
}

/** The same members, each also accepting null (PATCH bodies: null resets an attribute; the merge then validates it). */
export function nullableMembers<T extends Readonly<Record<string, core.$ZodType>>>(shape: T): { [K in keyof T]: z.ZodMiniNullable<T[K]> } {
  return Object.fromEntries(Object.entries(shape).map(([key, member]) => [key, z.nullable(member)])) as unknown as {
    [K in keyof T]: z.ZodMiniNullable<T[K]>;
  };
}
