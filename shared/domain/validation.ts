import * as z from "zod/mini";
import type { core } from "zod/mini";
import { type FieldIssue, ValidationError } from "#shared/domain/errors";

/**
 * Turning zod's issues into the `{ field, message }` entries of a 400. Every message is a sentence
 * for people that names the field ("lat must be at most 90.", "name is required."), never the
 * validation library's own text ("Invalid input: expected string, received undefined").
 *
 * parseWith gives zod an error map that words every issue without a schema-written message from its
 * code, parameters and input, behind this marker; zodIssues then puts the field in front. A message
 * written in a schema (`.regex(re, "must be …")`) is kept, with the field put in front too.
 */
const LIBRARY_DEFAULT = "\u0000";
/** zod's English defaults, in case an issue reaches zodIssues without parseWith's marker. */
const LIBRARY_TEXT = /^(Invalid|Too (big|small)|Unrecognized key|Expected|Required)\b/;

type Issue = core.$ZodIssue;
/** An issue as the error map sees it: with the offending input (final issues leave it out). */
type RawIssue = core.$ZodRawIssue;

const plural = (count: number | bigint, noun: string) => `${count} ${noun}${count === 1 || count === 1n ? "" : "s"}`;
const quoted = (value: unknown) => (typeof value === "string" ? value : (JSON.stringify(value) ?? String(value)));
const listed = (values: readonly unknown[]) =>
  values.length <= 1 ? values.map(quoted).join("") : `${values.slice(0, -1).map(quoted).join(", ")} or ${quoted(values.at(-1))}`;

const typeNames: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  bigint: "a whole number",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  date: "a date",
  null: "null",
  undefined: "absent",
  symbol: "a symbol",
  file: "a file",
  map: "a map",
  set: "a set",
  tuple: "an array",
  record: "an object",
};
const typeName = (expected: string) => typeNames[expected] ?? `a ${expected}`;

function sizeUnit(origin: string, count: number | bigint): string | undefined {
  if (origin === "string") return plural(count, "character");
  if (origin === "array" || origin === "set") return plural(count, "item");
  if (origin === "file") return plural(count, "byte");
  return undefined;
}

/** The rule an issue broke, as the end of a sentence whose subject is the field. */
function rule(raw: RawIssue): string {
  const issue = raw as Issue & { input?: unknown };
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      if (issue.expected === "never") return "is not allowed here";
      if (
        (issue.expected === "number" || issue.expected === "int") &&
        typeof issue.input === "number" &&
        !Number.isNaN(issue.input) &&
        !Number.isFinite(issue.input)
      ) {
        return "must be a finite number";
      }
      return `must be ${typeName(issue.expected)}`;
    case "too_big": {
      const unit = sizeUnit(issue.origin, issue.maximum as number);
      if (unit) return `must have at most ${unit}`;
      return issue.inclusive ? `must be at most ${issue.maximum}` : `must be less than ${issue.maximum}`;
    }
    case "too_small": {
      if (issue.origin === "string" && Number(issue.minimum) === 1) return "must not be empty";
      const unit = sizeUnit(issue.origin, issue.minimum as number);
      if (unit) return `must have at least ${unit}`;
      return issue.inclusive ? `must be at least ${issue.minimum}` : `must be greater than ${issue.minimum}`;
    }
    case "invalid_format":
      switch (issue.format) {
        case "regex":
          return "does not have the required format";
        case "starts_with":
          return `must start with "${(issue as { prefix?: string }).prefix ?? ""}"`;
        case "ends_with":
          return `must end with "${(issue as { suffix?: string }).suffix ?? ""}"`;
        case "includes":
          return `must contain "${(issue as { includes?: string }).includes ?? ""}"`;
        case "email":
          return "must be an email address";
        case "url":
          return "must be a URL";
        default:
          return `must be a valid ${issue.format}`;
      }
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "invalid_value":
      return issue.values.length === 1 ? `must be ${quoted(issue.values[0])}` : `must be one of ${issue.values.map(quoted).join(", ")}`;
    case "invalid_union":
      return unionRule(issue);
    case "invalid_key":
      return "is not an allowed key";
    case "invalid_element":
      return "has an entry that is not allowed";
    case "unrecognized_keys":
      return `has unknown fields: ${issue.keys.join(", ")}`;
    default:
      return "is not valid";
  }
}

/**
 * A value no branch of a union accepts. When a branch took the value's type but failed a rule of
 * its own (a string too long), that rule is what the client needs; otherwise the accepted types.
 */
function unionRule(issue: Extract<Issue, { code: "invalid_union" }>): string {
  const branches = issue.errors ?? [];
  const typeMismatch = (branch: Issue[]) => branch.some((inner) => inner.code === "invalid_type" && inner.path.length === 0);
  const matched = branches.find((branch) => branch.length > 0 && !typeMismatch(branch));
  if (matched) {
    return matched
      .map((inner) => {
        const text = inner.message.startsWith(LIBRARY_DEFAULT)
          ? inner.message.slice(LIBRARY_DEFAULT.length)
          : inner.message.replace(/[.]$/, "");
        return inner.path.length > 0 ? `${inner.path.map(String).join(".")} ${text}` : text;
      })
      .join("; ");
  }
  const expected = [
    ...new Set(
      branches.flatMap((branch) =>
        branch.flatMap((inner) => (inner.code === "invalid_type" && inner.path.length === 0 ? [typeName(inner.expected)] : [])),
      ),
    ),
  ];
  return expected.length > 0 ? `must be ${listed(expected)}` : "is not in an accepted form";
}

/** zod's error map for parseWith: the rule in words, marked so zodIssues puts the field in front. */
const humanErrorMap = (issue: RawIssue) => `${LIBRARY_DEFAULT}${rule(issue)}`;

/** A message written in a schema gets the field in front unless it starts with it (or with a capital). */
function withField(message: string, field: string): string {
  const leaf = field.split(".").at(-1) ?? field;
  const text = message.trim().replace(/[.]$/, "");
  const namesField = text.startsWith(`${field} `) || text.startsWith(`${leaf} `);
  return `${namesField || !/^[a-z]/.test(text) ? text : `${field} ${text}`}.`;
}

/** The sentence for one zod issue about `field`. */
export function issueMessage(issue: Issue, field: string): string {
  if (issue.message.startsWith(LIBRARY_DEFAULT)) return `${field} ${issue.message.slice(LIBRARY_DEFAULT.length)}.`;
  if (LIBRARY_TEXT.test(issue.message)) return `${field} ${rule(issue as unknown as RawIssue)}.`;
  return withField(issue.message, field);
}

/** zod issues → `{ field, message }` entries of the 400 body (field is the dotted path). */
export function zodIssues(error: core.$ZodError, prefix?: string): FieldIssue[] {
  const fieldName = (path: PropertyKey[]) =>
    [prefix, ...path.map(String)].filter((part) => part !== undefined && part !== "").join(".") || (prefix ?? "body");
  return error.issues.flatMap((issue) => {
    // A strict object reports all unknown keys in one issue: name each of them.
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => {
        const field = fieldName([...issue.path, key]);
        return { field, message: `${field} is not a known field.` };
      });
    }
    const field = fieldName(issue.path);
    return [{ field, message: issueMessage(issue as Issue, field) }];
  });
}

/** Parses or throws the 400 ValidationError naming every offending field. */
export function parseWith<T extends core.$ZodType>(schema: T, value: unknown, prefix?: string): core.output<T> {
  const result = z.safeParse(schema, value, { error: humanErrorMap });
  if (!result.success) throw new ValidationError(zodIssues(result.error, prefix));
  return result.data;
}

/**
 * `when` of an object-level refinement that reads only `fields`: it runs whenever those fields
 * parsed, even if others did not (zod skips refinements after any issue by default), so one 400
 * lists the cross-field rules along with the other fields' problems.
 */
export function whenFieldsParsed(fields: readonly string[]) {
  return (payload: { value: unknown; issues: readonly core.$ZodRawIssue[] }) =>
    typeof payload.value === "object" &&
    payload.value !== null &&
    !payload.issues.some(
      (issue) =>
        issue.code !== "unrecognized_keys" &&
        (issue.path === undefined || issue.path.length === 0 || fields.includes(String(issue.path[0]))),
    );
}
