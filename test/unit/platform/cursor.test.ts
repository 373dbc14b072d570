import { describe, expect, it } from "vitest";
import { ValidationError } from "#shared/domain/errors";
import { decodeCursor, encodeCursor } from "#shared/store/pagination";

describe("Module: pagination cursors", () => {
  it("round-trips a LastEvaluatedKey of the expected partition", () => {
    const key = { PK: "ORG#o1", SK: "VEH#abc" };
    const cursor = encodeCursor(key) as string;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, "PK", "ORG#o1")).toEqual(key);
  });

  it("answers null when there is no next page", () => {
    expect(encodeCursor(undefined)).toBeNull();
  });

  it.each([
    ["another organization's cursor", encodeCursor({ PK: "ORG#o2", SK: "VEH#abc" }) as string],
    ["garbage", "!!!not-base64!!!"],
    ["base64 of non-JSON", Buffer.from("hello").toString("base64url")],
    ["a JSON array", Buffer.from("[1,2]").toString("base64url")],
    ["non-string key values", Buffer.from(JSON.stringify({ PK: "ORG#o1", SK: { S: "x" } })).toString("base64url")],
  ])("rejects %s with a 400 naming cursor", (_case, cursor) => {
    try {
      decodeCursor(cursor, "PK", "ORG#o1");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).errors[0]?.field).toBe("cursor");
    }
  });
});
