import { describe, expect, it } from "vitest";
import type { Caller } from "#shared/domain/caller";
import { dataTypeSchema } from "#shared/domain/data-types/schema";
import { ValidationError } from "#shared/domain/errors";
import { createCustomValues, type ExtensionType } from "#shared/domain/extensions/service";

const caller = (hiddenFields: string[] = []): Caller => ({
  userId: "u",
  organizationId: "o",
  hubIds: [],
  permissions: new Set(),
  permissionDetails: hiddenFields.length > 0 ? [{ permissionName: "view/data", dataTypeId: "665f1c2e9b1d4a0012345678", hiddenFields }] : [],
});

const type: ExtensionType = {
  version: 3,
  dataType: dataTypeSchema.parse({
    _id: "665f1c2e9b1d4a0012345678",
    name: "Vehicle extras",
    commonData: true,
    extends: { entity: "vehicle" },
    fields: [
      { id: "vin", title: "VIN", type: "text", required: true, unique: true },
      { id: "color", title: "Color", type: "option", required: false, optionData: ["red", "blue"], default: "red" },
      { id: "secret", title: "Secret", type: "text", required: false },
    ],
    createdBy: "u",
    organizationId: "o",
    createdTime: "2026-11-24 08:00:00",
    updatedTime: "2026-11-24 08:00:00",
  }),
};

const custom = createCustomValues({
  extensionTypes: { find: async () => type },
  relations: { store: { findById: async () => undefined }, entities: { hubExists: async () => true, vehicleExists: async () => true } },
});

const stored = {
  dataTypeId: type.dataType._id,
  values: { vin: "V-1", color: "blue", secret: "s", removed: "old" },
  guards: [{ name: "vin", scope: "vehicle", value: "V-1" }],
};

describe("Domain: custom values of an entity", () => {
  describe("Method: prepare", () => {
    it("create: absent custom is {} (defaults apply, required reported as custom.<field> sentences)", async () => {
      // Act
      const error = await custom.prepare(caller(), "vehicle", type, undefined, undefined, "create").catch((caught: unknown) => caught);
      // Assess
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).errors).toEqual([{ field: "custom.vin", message: "custom.vin is required." }]);
    });

    it("create: checks, normalises and claims unique values scoped by entity, remembering the type version", async () => {
      const write = await custom.prepare(caller(), "vehicle", type, undefined, { vin: "V-9" }, "create");
      expect(write).toEqual({
        next: {
          dataTypeId: type.dataType._id,
          values: { vin: "V-9", color: "red" },
          guards: [{ name: "vin", scope: "vehicle", value: "V-9" }],
        },
        typeVersion: 3,
      });
    });

    it("replace/patch without custom leave the stored values alone", async () => {
      expect(await custom.prepare(caller(), "vehicle", type, stored, undefined, "replace")).toBeUndefined();
      expect(await custom.prepare(caller(), "vehicle", type, stored, undefined, "patch")).toBeUndefined();
    });

    it("patch merges per key (null clears) and drops values of removed fields", async () => {
      const write = await custom.prepare(caller(), "vehicle", type, stored, { secret: null }, "patch");
      expect(write?.next.values).toEqual({ vin: "V-1", color: "blue" });
    });

    it("replace keeps the caller's hidden fields it omits, clears the others", async () => {
      const write = await custom.prepare(caller(["secret"]), "vehicle", type, stored, { vin: "V-2" }, "replace");
      expect(write?.next.values).toEqual({ vin: "V-2", color: "red", secret: "s" });
    });

    it("values checked against another type id are not carried over", async () => {
      const error = await custom
        .prepare(caller(), "vehicle", type, { ...stored, dataTypeId: "665f1c2e9b1d4a00ffffffff" }, { color: "blue" }, "patch")
        .catch((caught: unknown) => caught);
      // the old vin is not merged in: the required field is missing
      expect((error as ValidationError).errors).toEqual([{ field: "custom.vin", message: "custom.vin is required." }]);
    });

    it("without an extension type, only an empty custom object is accepted", async () => {
      expect(await custom.prepare(caller(), "vehicle", undefined, undefined, {}, "create")).toBeUndefined();
      await expect(custom.prepare(caller(), "vehicle", undefined, undefined, { vin: "V" }, "create")).rejects.toBeInstanceOf(
        ValidationError,
      );
    });
  });

  describe("Method: view", () => {
    it("answers the current fields' values without hidden fields; nothing without a type", () => {
      expect(custom.view(caller(), type, stored)).toEqual({ vin: "V-1", color: "blue", secret: "s" });
      expect(custom.view(caller(["secret"]), type, stored)).toEqual({ vin: "V-1", color: "blue" });
      expect(custom.view(caller(), type, { ...stored, dataTypeId: "665f1c2e9b1d4a00ffffffff" })).toEqual({});
      expect(custom.view(caller(), undefined, stored)).toBeUndefined();
    });
  });
});
