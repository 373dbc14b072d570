import type { APIGatewayProxyEvent } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { ValidationError } from "#shared/domain/errors";
import { jsonDepth, MAX_JSON_DEPTH, parseJsonBody } from "#shared/http/parse-request";
import type { RouteDefinition } from "#shared/http/route";

const route = {
  operationId: "x",
  method: "POST",
  path: "/x",
  handler: "x",
  summary: "x",
  tag: "x",
  permission: "add/vehicle",
  responses: () => ({}),
} satisfies RouteDefinition;
const eventWith = (body: string) =>
  ({ body, isBase64Encoded: false, headers: { "Content-Type": "application/json" } }) as unknown as APIGatewayProxyEvent;
const nestedArrays = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

describe("Module: parse-request", () => {
  describe("Method: jsonDepth", () => {
    it.each([
      [1, 0],
      [[], 1],
      [{ a: [{ b: 1 }] }, 3],
      [[1, [2, [3]], { c: {} }], 3],
    ])("measures %j as %i", (value, depth) => {
      expect(jsonDepth(value, Number.POSITIVE_INFINITY)).toBe(depth);
    });

    it("walks a 100,000-deep array without recursion", () => {
      expect(jsonDepth(JSON.parse(nestedArrays(100_000)), Number.POSITIVE_INFINITY)).toBe(100_000);
    });
  });

  describe("Method: parseJsonBody", () => {
    it(`accepts ${MAX_JSON_DEPTH} levels and refuses ${MAX_JSON_DEPTH + 1} with a 400 naming the body`, () => {
      expect(parseJsonBody(eventWith(`{"a":${nestedArrays(MAX_JSON_DEPTH - 1)}}`), route)).toBeTruthy();
      for (const body of [`{"a":${nestedArrays(MAX_JSON_DEPTH)}}`, nestedArrays(5000), `{"a":${'{"b":'.repeat(200)}1${"}".repeat(200)}}`]) {
        let thrown: unknown;
        try {
          parseJsonBody(eventWith(body), route);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(ValidationError);
        expect((thrown as ValidationError).errors).toEqual([
          { field: "body", message: expect.stringContaining(`${MAX_JSON_DEPTH} levels`) },
        ]);
      }
    });
  });
});
