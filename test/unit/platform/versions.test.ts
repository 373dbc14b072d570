import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, PreconditionFailedError, ValidationError } from "#shared/domain/errors";
import { formatETag, parseIfMatch, VersionCondition, writeUnder } from "#shared/domain/versions";

describe("Function: parseIfMatch", () => {
  it.each([
    [undefined, undefined],
    ["*", "*"],
    [" * ", "*"],
    ['"1"', [1]],
    ['"42"', [42]],
    [' "7" ', [7]],
    ['"1", "2"', [1, 2]],
    ['"1",,"2",', [1, 2]],
    ['W/"1", "2"', [2]],
    ['W/"1"', []],
    ['"0"', []],
    ['"01"', []],
    ['"abc"', []],
    ['""', []],
    ['"12345678901234567"', []],
    ['"9007199254740993"', []],
  ])("reads %j as %j (weak tags and tags not of ours match no version)", (header, expected) => {
    expect(parseIfMatch(header)).toEqual(expected);
  });

  it.each([["1"], ['"1",*'], [""], [", ,"], ['"1'], ['"1" "2"'], ['"1", two'], ["W/1"], ['"a"b"'], ['"'.repeat(2) + "x".repeat(5000)]])(
    "refuses %j (neither * nor an entity-tag list) with a 400 naming If-Match",
    (header) => {
      try {
        parseIfMatch(header);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).errors).toEqual([{ field: "If-Match", message: expect.stringContaining("If-Match") }]);
      }
    },
  );

  it("round-trips every version through formatETag", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        (version) => (parseIfMatch(formatETag(version)) as number[])[0] === version,
      ),
    );
  });
});

describe("Class: VersionCondition", () => {
  describe("Method: check", () => {
    it("records the version read when no If-Match was sent, or * was", () => {
      for (const ifMatch of [undefined, "*" as const]) {
        const condition = new VersionCondition(ifMatch);
        condition.check(3);
        expect(condition.version).toBe(3);
      }
    });

    it("passes on the named version and throws 412 sys-412 on any other", () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 1000 }), (named, current) => {
          const condition = new VersionCondition([named]);
          if (named === current) {
            condition.check(current);
            return condition.version === current;
          }
          expect(() => condition.check(current)).toThrow(PreconditionFailedError);
          return condition.version === undefined;
        }),
      );
    });
  });

  it("an empty list (only weak or foreign tags) matches no version", () => {
    expect(() => new VersionCondition([]).check(1)).toThrow(PreconditionFailedError);
  });

  it("failedOnMissing: a 404 before the resource was read is a false precondition when If-Match was sent", () => {
    expect(new VersionCondition("*").failedOnMissing(new NotFoundError())).toBe(true);
    expect(new VersionCondition([3]).failedOnMissing(new NotFoundError())).toBe(true);
    expect(new VersionCondition().failedOnMissing(new NotFoundError())).toBe(false);
    const read = new VersionCondition("*");
    read.check(2);
    expect(read.failedOnMissing(new NotFoundError())).toBe(false);
  });

  describe("Method: write", () => {
    it("records the version written", async () => {
      const condition = new VersionCondition([2]);
      condition.check(2);
      await condition.write(async () => undefined, 3);
      expect(condition.version).toBe(3);
    });

    it("turns a lost condition (409 sys-410, or false from a delete) into 412 when If-Match named a version", async () => {
      const named = new VersionCondition([2]);
      await expect(named.write(async () => Promise.reject(new ConflictError("changed", "sys-410")))).rejects.toBeInstanceOf(
        PreconditionFailedError,
      );
      await expect(named.write(async () => false)).rejects.toBeInstanceOf(PreconditionFailedError);
    });

    it("leaves other errors, and every error without a named version, as they are", async () => {
      await expect(
        new VersionCondition([2]).write(async () => Promise.reject(new ConflictError("in use", "hub-409"))),
      ).rejects.toMatchObject({ failedCode: "hub-409" });
      await expect(new VersionCondition([2]).write(async () => Promise.reject(new NotFoundError()))).rejects.toBeInstanceOf(NotFoundError);
      await expect(
        new VersionCondition("*").write(async () => Promise.reject(new ConflictError("changed", "sys-410"))),
      ).rejects.toMatchObject({ failedCode: "sys-410" });
      await expect(new VersionCondition().write(async () => false)).resolves.toBe(false);
    });
  });

  it("writeUnder runs the write unchanged without a condition", async () => {
    await expect(writeUnder(undefined, async () => false)).resolves.toBe(false);
    await expect(writeUnder(new VersionCondition([1]), async () => false)).rejects.toBeInstanceOf(PreconditionFailedError);
  });
});
