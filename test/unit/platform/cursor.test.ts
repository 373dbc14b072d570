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
    ["an extra attribute", encodeCursor({ PK: "ORG#o1", SK: "VEH#abc", foo: "bar" }) as string],
    ["a missing sort key", encodeCursor({ PK: "ORG#o1" }) as string],
    ["an empty sort key", encodeCursor({ PK: "ORG#o1", SK: "" }) as string],
    ["a sort key over DynamoDB's 1,024 bytes", encodeCursor({ PK: "ORG#o1", SK: "x".repeat(1025) }) as string],
    ["an index key for a table query", encodeCursor({ GSI1PK: "ORG#o1", GSI1SK: "a", PK: "ORG#o1", SK: "b" }) as string],
  ])("rejects %s with a 400 naming cursor", (_case, cursor) => {
    try {
      decodeCursor(cursor, "PK", "ORG#o1");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).errors[0]?.field).toBe("cursor");
    }
  });

  it("an index query's cursor must carry the index key and the table key, nothing else", () => {
    const key = { GSI1PK: "ORG#o1#HUB#h", GSI1SK: "VEH#1", PK: "ORG#o1", SK: "VEH#1" };
    expect(decodeCursor(encodeCursor(key) as string, "GSI1PK", "ORG#o1#HUB#h")).toEqual(key);
    for (const broken of [
      { GSI1PK: "ORG#o1#HUB#h", GSI1SK: "VEH#1" },
      { ...key, GSI2PK: "x" },
      { ...key, PK: "" },
    ]) {
      expect(() => decodeCursor(encodeCursor(broken) as string, "GSI1PK", "ORG#o1#HUB#h")).toThrow(ValidationError);
    }
    expect(() => decodeCursor(encodeCursor(key) as string, "GSI9PK", "ORG#o1#HUB#h")).toThrow(ValidationError);
  });
});
