import { describe, expect, it } from "vitest";
import type { Caller } from "#shared/domain/caller";
import { type DataTypeInput, dataTypeInputSchema, type DataTypePatch, dataTypePatchSchema } from "#shared/domain/data-types/schema";
import { createDataTypeReader, createDataTypeService } from "#shared/domain/data-types/service";
import { maskProviderKey } from "#shared/domain/data-types/view";
import { AppError } from "#shared/domain/errors";
import { memoryDataTypeStore } from "./memory-store.ts";

const caller: Caller = { userId: "user-9", organizationId: "org-1", hubIds: [], permissions: new Set(), permissionDetails: [] };
const otherOrg: Caller = { ...caller, organizationId: "org-2" };
const fixedNow = new Date("2026-03-04T05:06:07Z");

const input = (body: Record<string, unknown>): DataTypeInput => dataTypeInputSchema.parse(body);
const patchOf = (body: Record<string, unknown>): DataTypePatch => dataTypePatchSchema.parse(body);
const customer = (extra: Record<string, unknown> = {}) =>
  input({
    name: "Customer",
    fields: [
      { type: "title", title: "Name" },
      { id: "age", title: "Age", type: "number", required: false },
    ],
    ...extra,
  });

function setup(options: { allowLoopbackProviders?: boolean } = {}) {
  const memory = memoryDataTypeStore();
  return { memory, service: createDataTypeService(memory.store, { now: () => fixedNow, ...options }) };
}

/** Runs `action`, expecting a typed error; returns its status, failedCode and body details. */
async function failure(action: Promise<unknown>) {
  const error = await action.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  const appError = error as AppError;
  return {
    status: appError.statusCode,
    failedCode: appError.failedCode,
    fields: ((appError.details().errors as Array<{ field: string }>) ?? []).map((e) => e.field),
  };
}

describe("Service: data types", () => {
  describe("Method: create", () => {
    it("stores the type with its creator, organization and Y-m-d H:i:s times", async () => {
      const { service, memory } = setup();
      const created = await service.create(caller, customer());
      expect(created).toMatchObject({
        name: "Customer",
        createdBy: "user-9",
        organizationId: "org-1",
        createdTime: "2026-03-04 05:06:07",
        locked: false,
        commonData: false,
      });
      expect(created).not.toHaveProperty("titleRule");
      expect(memory.raw("org-1", created._id)?.dataType.titleRule).toBe("words");
    });

    it("answers 409 dt-001 for a name already used, in any letter case", async () => {
      const { service } = setup();
      await service.create(caller, customer());
      expect(await failure(service.create(caller, customer({ name: "CUSTOMER" })))).toMatchObject({ status: 409, failedCode: "dt-001" });
    });

    it("lets another organization use the same name", async () => {
      const { service } = setup();
      await service.create(caller, customer());
      await expect(service.create(otherOrg, customer())).resolves.toMatchObject({ name: "Customer" });
    });

    it("forces commonData true on an extension type and allows one per entity", async () => {
      const { service } = setup();
      const extension = input({
        name: "User extras",
        fields: [{ id: "badge", title: "Badge", type: "text", required: false }],
        extends: { entity: "user" },
      });
      expect(await service.create(caller, extension)).toMatchObject({ commonData: true, extends: { entity: "user" } });
      expect(await failure(service.create(caller, { ...extension, name: "More user extras" }))).toMatchObject({
        status: 409,
        failedCode: "dt-002",
      });
      await expect(service.create(caller, { ...extension, name: "Hub extras", extends: { entity: "hub" } })).resolves.toBeDefined();
    });

    it("masks the provider key in the response but stores it in clear for the fetch side", async () => {
      const { service, memory } = setup();
      const created = await service.create(
        caller,
        customer({ provider: "external-api", providerConfig: { url: "https://api.example.com/x", key: "sk_live_1234567890abcd" } }),
      );
      expect(created.providerConfig).toEqual({ url: "https://api.example.com/x", key: "****abcd" });
      expect(memory.raw("org-1", created._id)?.dataType.providerConfig?.key).toBe("sk_live_1234567890abcd");
    });

    it("rejects a type too large for one stored item with 400 on fields, storing nothing", async () => {
      const { service } = setup();
      const options = Array.from({ length: 500 }, (_, i) => `${i}`.padEnd(200, "x"));
      const fields = [
        { type: "title", title: "Name" },
        ...Array.from({ length: 4 }, (_, i) => ({ id: `o${i}`, title: "O", type: "option", required: false, optionData: options })),
      ];
      expect(await failure(service.create(caller, customer({ fields })))).toMatchObject({ status: 400, fields: ["fields"] });
      expect((await service.list(caller, { limit: 10 })).items).toEqual([]);
    });

    it("checks relation targets in the caller's organization only", async () => {
      const { service } = setup();
      const foreign = await service.create(otherOrg, customer({ name: "Order" }));
      const relation = {
        id: "order",
        title: "Order",
        type: "relation",
        required: false,
        relation: { kind: "belongsTo", targetKind: "dataType", target: foreign._id },
      };
      const body = customer({ fields: [{ type: "title", title: "Name" }, relation] });
      expect(await failure(service.create(caller, body))).toMatchObject({ status: 400, fields: ["fields.1.relation.target"] });
      const own = await service.create(caller, customer({ name: "Order" }));
      const ok = customer({
        name: "Invoice",
        fields: [
          { type: "title", title: "Name" },
          { ...relation, relation: { ...relation.relation, target: own._id } },
        ],
      });
      await expect(service.create(caller, ok)).resolves.toBeDefined();
    });

    it("answers 409 dt-005 when a related type changes between the read and the write", async () => {
      const { service, memory } = setup();
      const order = await service.create(caller, customer({ name: "Order" }));
      const originalFind = memory.store.findById;
      memory.store.findById = async (organizationId, id) => {
        const found = await originalFind(organizationId, id);
        if (id === order._id) memory.mutate(organizationId, id, () => {}); // someone saves Order right after our read
        return found;
      };
      const relation = {
        id: "order",
        title: "Order",
        type: "relation",
        required: false,
        relation: { kind: "belongsTo", targetKind: "dataType", target: order._id },
      };
      expect(await failure(service.create(caller, customer({ fields: [{ type: "title", title: "Name" }, relation] })))).toMatchObject({
        status: 409,
        failedCode: "dt-005",
      });
    });
  });

  describe("Method: get", () => {
    it("answers 404 for another organization's type and for a malformed id", async () => {
      const { service } = setup();
      const created = await service.create(caller, customer());
      expect(await failure(service.get(otherOrg, created._id))).toMatchObject({ status: 404, failedCode: "sys-404" });
      expect(await failure(service.get(caller, "not-an-id"))).toMatchObject({ status: 404, failedCode: "sys-404" });
    });
  });

  describe("Method: replace", () => {
    it("keeps id, creator and creation time; omitted commonData stays as created", async () => {
      const { service } = setup();
      const created = await service.create(caller, customer({ commonData: true }));
      const replaced = await service.replace({ ...caller, userId: "someone-else" }, created._id, customer({ name: "Client" }));
      expect(replaced).toMatchObject({
        _id: created._id,
        name: "Client",
        createdBy: "user-9",
        createdTime: created.createdTime,
        commonData: true,
      });
    });

    it("rejects a commonData change with 400 and changes nothing", async () => {
      const { service } = setup();
      const created = await service.create(caller, customer());
      expect(await failure(service.replace(caller, created._id, customer({ name: "Other", commonData: true })))).toMatchObject({
        status: 400,
        fields: ["commonData"],
      });
      expect(await service.get(caller, created._id)).toEqual(created);
    });

    it("keeps the stored key when the masked key is sent back, and replaces it when a new key is sent", async () => {
      const { service, memory } = setup();
      const providerConfig = { url: "https://api.example.com/x", key: "sk_live_1234567890abcd" };
      const created = await service.create(caller, customer({ provider: "external-api", providerConfig }));
      await service.replace(caller, created._id, customer({ provider: "external-api", providerConfig: created.providerConfig }));
      expect(memory.raw("org-1", created._id)?.dataType.providerConfig?.key).toBe(providerConfig.key);
      await service.replace(
        caller,
        created._id,
        customer({ provider: "external-api", providerConfig: { url: providerConfig.url, key: "new-key-000000000" } }),
      );
      expect(memory.raw("org-1", created._id)?.dataType.providerConfig?.key).toBe("new-key-000000000");
      await service.replace(caller, created._id, customer());
      expect(memory.raw("org-1", created._id)?.dataType.providerConfig).toBeNull();
    });

    it("refuses to carry the stored key to another origin: the masked or a missing key is a 400 naming providerConfig.key", async () => {
      const { service, memory } = setup();
      const providerConfig = { url: "https://api.example.com/x", key: "sk_live_1234567890abcd" };
      const created = await service.create(caller, customer({ provider: "external-api", providerConfig }));
      const masked = created.providerConfig?.key;
      for (const url of ["https://attacker.example/collect", "http://api.example.com/x", "https://api.example.com:8443/x"]) {
        expect(await failure(service.patch(caller, created._id, patchOf({ providerConfig: { url, key: masked } })))).toMatchObject({
          status: 400,
          fields: ["providerConfig.key"],
        });
        expect(await failure(service.patch(caller, created._id, patchOf({ providerConfig: { url } })))).toMatchObject({
          status: 400,
          fields: ["providerConfig.key"],
        });
        expect(
          await failure(service.replace(caller, created._id, customer({ provider: "external-api", providerConfig: { url, key: masked } }))),
        ).toMatchObject({ status: 400, fields: ["providerConfig.key"] });
      }
      expect(memory.raw("org-1", created._id)?.dataType.providerConfig).toEqual(providerConfig);
      // Same origin, another path (default port spelled out): the masked key keeps the stored one.
      await service.patch(caller, created._id, patchOf({ providerConfig: { url: "https://api.example.com:443/v2", key: masked } }));
      expect(memory.raw("org-1", created._id)?.dataType.providerConfig).toEqual({
        url: "https://api.example.com:443/v2",
        key: providerConfig.key,
      });
      // Another origin with the real key sent again is a normal change.
      await service.patch(caller, created._id, patchOf({ providerConfig: { url: "https://other.example/x", key: "sk_other_000000000" } }));
      expect(memory.raw("org-1", created._id)?.dataType.providerConfig).toEqual({
        url: "https://other.example/x",
        key: "sk_other_000000000",
      });
    });

    it("answers 409 dt-003 while the type is locked by an import, and accepts the save once it is ready", async () => {
      const { service, memory } = setup();
      const created = await service.create(caller, customer());
      memory.mutate("org-1", created._id, (dataType) => {
        dataType.locked = true;
      });
      expect(await failure(service.replace(caller, created._id, customer({ name: "X" })))).toMatchObject({
        status: 409,
        failedCode: "dt-003",
      });
      expect(await failure(service.patch(caller, created._id, patchOf({ name: "X" })))).toMatchObject({
        status: 409,
        failedCode: "dt-003",
      });
      expect(await failure(service.remove(caller, created._id))).toMatchObject({ status: 409, failedCode: "dt-003" });
      expect((await service.get(caller, created._id)).locked).toBe(true);
      memory.mutate("org-1", created._id, (dataType) => {
        dataType.locked = false;
      });
      await expect(service.replace(caller, created._id, customer({ name: "X" }))).resolves.toMatchObject({ name: "X" });
    });

    it("ends the earlier version's no-space title rule on the first save", async () => {
      const { service, memory } = setup();
      const created = await service.create(caller, customer());
      memory.mutate("org-1", created._id, (dataType) => {
        dataType.titleRule = "no-space";
      });
      await service.replace(caller, created._id, customer());
      expect(memory.raw("org-1", created._id)?.dataType.titleRule).toBe("words");
    });

    it("lets a legacy type above 5 searchable fields be saved while the count does not grow", async () => {
      const { service, memory } = setup();
      const created = await service.create(caller, customer());
      const searchable = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ id: `s${i}`, title: `S${i}`, type: "text", required: false, searchable: true }));
      memory.mutate("org-1", created._id, (dataType) => {
        dataType.fields = [
          dataType.fields[0]!,
          ...searchable(6).map((f) => ({ ...f, type: "text" as const, unique: false, show: true, optionData: [] })),
        ];
      });
      const body = (n: number) => customer({ fields: [{ type: "title", title: "Name" }, ...searchable(n)] });
      await expect(service.replace(caller, created._id, body(6))).resolves.toBeDefined();
      expect(await failure(service.replace(caller, created._id, body(7)))).toMatchObject({ status: 400, fields: ["fields"] });
      await expect(service.patch(caller, created._id, patchOf({ limitUser: true }))).resolves.toMatchObject({ limitUser: true });
    });
  });

  describe("Method: patch", () => {
    it("replaces only the attributes sent and validates the merged type", async () => {
      const { service } = setup();
      const created = await service.create(caller, customer({ uniqueTogether: [] }));
      const patched = await service.patch(caller, created._id, patchOf({ limitUser: true }));
      expect(patched).toEqual({ ...created, limitUser: true, updatedTime: patched.updatedTime });
      const invalid = patchOf({ uniqueTogether: [["age", "nope"]] });
      expect(await failure(service.patch(caller, created._id, invalid))).toMatchObject({ status: 400, fields: ["uniqueTogether.0.1"] });
      expect((await service.get(caller, created._id)).uniqueTogether).toEqual([]);
    });

    it("renames, freeing the old name for another type", async () => {
      const { service } = setup();
      const created = await service.create(caller, customer());
      await service.patch(caller, created._id, patchOf({ name: "Client" }));
      await expect(service.create(caller, customer())).resolves.toMatchObject({ name: "Customer" });
      expect(await failure(service.patch(caller, created._id, patchOf({ name: "customer" })))).toMatchObject({
        status: 409,
        failedCode: "dt-001",
      });
    });
  });

  describe("Method: remove", () => {
    it("answers 409 dt-004 while records exist, deletes once they are gone", async () => {
      const { service, memory } = setup();
      const created = await service.create(caller, customer());
      memory.setRecordCount("org-1", created._id, 1);
      expect(await failure(service.remove(caller, created._id))).toMatchObject({ status: 409, failedCode: "dt-004" });
      memory.setRecordCount("org-1", created._id, 0);
      await service.remove(caller, created._id);
      expect(await failure(service.get(caller, created._id))).toMatchObject({ status: 404, failedCode: "sys-404" });
    });
  });

  describe("Reader: for the records area", () => {
    it("finds a type by id and by name (case-insensitive, trimmed), with the key in clear", async () => {
      const { service, memory } = setup();
      const created = await service.create(
        caller,
        customer({ provider: "external-api", providerConfig: { url: "https://api.example.com", key: "k-123456789012" } }),
      );
      const reader = createDataTypeReader(memory.store);
      expect((await reader.findById("org-1", created._id))?.dataType.providerConfig?.key).toBe("k-123456789012");
      expect((await reader.findByName("org-1", "  customer "))?.dataType._id).toBe(created._id);
      expect(await reader.findByName("org-2", "Customer")).toBeUndefined();
      expect(await reader.findById("org-1", "bad")).toBeUndefined();
    });
  });

  it.each([
    ["sk_live_1234567890abcd", "****abcd"],
    ["short", "****"],
    ["exactly11ch", "****"],
  ])("masks key %s as %s", (key, masked) => {
    expect(maskProviderKey(key)).toBe(masked);
  });
});
