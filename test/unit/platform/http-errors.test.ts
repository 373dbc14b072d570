import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { ConflictError, MissingPermissionError, NotFoundError, ValidationError } from "#shared/domain/errors";
import { parseWith, zodIssues } from "#shared/domain/validation";
import { errorToHttpResult } from "#shared/http/error-response";
import { callerFromClaims } from "#shared/domain/caller";

describe("Module: error mapping", () => {
  it("maps a validation error to 400 with the contract message and errors", () => {
    expect(errorToHttpResult(ValidationError.single("name", "required"))).toEqual({
      statusCode: 400,
      body: {
        status: false,
        message: "Bad request - invalid parameters provided.",
        failedCode: "sys-400",
        errors: [{ field: "name", message: "required" }],
      },
    });
  });

  it("maps not found, conflict and missing permission", () => {
    expect(errorToHttpResult(new NotFoundError())).toMatchObject({ statusCode: 404, body: { message: "Data not found" } });
    expect(errorToHttpResult(new ConflictError("taken"))).toMatchObject({ statusCode: 409, body: { message: "taken" } });
    expect(errorToHttpResult(new MissingPermissionError("view/routing-schedule"))).toMatchObject({
      statusCode: 403,
      body: { status: false, failedCode: "sys-035" },
    });
  });

  it("never leaks internals of unexpected errors", () => {
    process.env.LOG_LEVEL = "silent";
    const result = errorToHttpResult(new Error("connect ECONNREFUSED 10.0.0.1:8000 at Socket.connect (node:net:1)"));
    expect(result).toEqual({
      statusCode: 500,
      body: { status: false, message: "Internal server error, please contact support.", failedCode: "sys-500" },
    });
  });
});

describe("Module: zod issues", () => {
  const schema = z.strictObject({ name: z.string(), nested: z.strictObject({ n: z.number() }) });

  it("names nested fields with a dotted path and each unknown key", () => {
    const result = schema.safeParse({ name: 1, nested: { n: "x", extra: 1 }, other: true });
    expect(result.success).toBe(false);
    const fields = zodIssues(result.error as z.core.$ZodError).map((issue) => issue.field);
    expect(fields).toEqual(expect.arrayContaining(["name", "nested.n", "nested.extra", "other"]));
  });

  it("parseWith returns the parsed value or throws a ValidationError", () => {
    expect(parseWith(schema, { name: "a", nested: { n: 1 } })).toEqual({ name: "a", nested: { n: 1 } });
    expect(() => parseWith(schema, {})).toThrow(ValidationError);
  });
});

describe("Module: caller claims", () => {
  it("reads the caller from organizationId or custom:organizationId", () => {
    expect(callerFromClaims({ sub: "u", organizationId: "o", hubIds: ["h"], permissions: ["a"] })).toMatchObject({
      userId: "u",
      organizationId: "o",
      hubIds: ["h"],
    });
    expect(callerFromClaims({ sub: "u", "custom:organizationId": "o2" })?.organizationId).toBe("o2");
  });

  it.each([
    ["no organization", { sub: "u" }],
    ["no subject", { organizationId: "o" }],
    ["hubIds not an array", { sub: "u", organizationId: "o", hubIds: "h1" }],
    ["more than 100 hubIds", { sub: "u", organizationId: "o", hubIds: Array.from({ length: 101 }, (_, i) => `h${i}`) }],
  ])("rejects claims with %s", (_case, claims) => {
    expect(callerFromClaims(claims)).toBeUndefined();
  });
});
