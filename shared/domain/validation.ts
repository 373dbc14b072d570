import type { ZodError, ZodType } from "zod";
import { type FieldIssue, ValidationError } from "#shared/domain/errors";

/** zod issues → `{ field, message }` entries of the 400 body (field is the dotted path). */
export function zodIssues(error: ZodError, prefix?: string): FieldIssue[] {
  const fieldName = (path: PropertyKey[]) =>
    [prefix, ...path.map(String)].filter((part) => part !== undefined && part !== "").join(".") || (prefix ?? "body");
  return error.issues.flatMap((issue) =>
    // A strict object reports all unknown keys in one issue: name each of them.
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ field: fieldName([...issue.path, key]), message: "unknown field" }))
      : [{ field: fieldName(issue.path), message: issue.message }],
  );
}

/** Parses or throws the 400 ValidationError naming every offending field. */
export function parseWith<T extends ZodType>(schema: T, value: unknown, prefix?: string): ReturnType<T["parse"]> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(zodIssues(result.error, prefix));
  return result.data as ReturnType<T["parse"]>;
}
