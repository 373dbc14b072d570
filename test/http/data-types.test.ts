import { PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { dataTypeReader } from "#shared/app/data-types";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { apiClient, newTenant, type ApiClient } from "#test/support/local-api";
import { expectRefused, refusal } from "#test/support/refusals";

const titleField = { type: "title", title: "Customer name" };
const validDataType = {
  name: "Customer",
  fields: [
    titleField,
    { id: "age", title: "Age", type: "number", required: false, validations: { min: 0, max: 150, decimals: 0 } },
    { id: "segment", title: "Segment", type: "option", isRequired: true, optionData: ["retail", "wholesale"], searchable: true },
    { id: "visitedOn", title: "Visited on", type: "date", required: false, default: "2026-01-01" },
    { id: "phone", title: "Phone", type: "phoneNumber", required: false },
  ],
  limitUser: true,
  uniqueTogether: [["segment", "phone"]],
};

async function createDataType(api: ApiClient, overrides: Record<string, unknown> = {}) {
  const response = await api.post("/data-type", { ...validDataType, ...overrides });
  expect(response.status).toBe(201);
  return response.body.data_type;
}

const listNames = async (api: ApiClient, query = "") =>
  (await api.get(`/data-types${query}`)).body.data_types.map((t: { name: string }) => t.name);

/** Test-only writes that stand in for the import and records areas, which do not exist yet. */
async function setStoredAttributes(organizationId: string, dataTypeId: string, attributes: Record<string, unknown>) {
  const names = Object.keys(attributes);
  await documentClient().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.dataType(organizationId, dataTypeId),
      UpdateExpression: `SET ${names.map((_, i) => `#a${i} = :v${i}`).join(", ")}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#a${i}`, name])),
      ExpressionAttributeValues: Object.fromEntries(names.map((name, i) => [`:v${i}`, attributes[name]])),
    }),
  );
}

async function putRecord(organizationId: string, dataTypeId: string) {
  await documentClient().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.record(organizationId, dataTypeId, "*", "Acme"), entity: "record", dataId: "Acme", version: 1 },
    }),
  );
}

/** Each case: one invalid body → 400 naming this field. */
const invalidBodies: Array<[string, Record<string, unknown>, string]> = [
  ["missing name", { name: undefined }, "name"],
  ["blank name", { name: "   " }, "name"],
  ["name over 100 characters", { name: "x".repeat(101) }, "name"],
  ["missing fields", { fields: undefined }, "fields"],
  ["empty fields", { fields: [] }, "fields"],
  ["no title field", { fields: [{ id: "a", title: "A", type: "text", required: true }] }, "fields"],
  ["two title fields", { fields: [titleField, { ...titleField, title: "Other" }] }, "fields.1.type"],
  ["field id with a dash", { fields: [titleField, { id: "first-name", title: "F", type: "text", required: true }] }, "fields.1.id"],
  ["field id that is a system key", { fields: [titleField, { id: "hubId", title: "Hub", type: "text", required: true }] }, "fields.1.id"],
  [
    "duplicate field id",
    { fields: [titleField, { id: "a", title: "A", type: "text", required: true }, { id: "a", title: "B", type: "text", required: true }] },
    "fields.2.id",
  ],
  ["field without required", { fields: [titleField, { id: "a", title: "A", type: "text" }] }, "fields.1.required"],
  ["unknown field type", { fields: [titleField, { id: "a", title: "A", type: "string", required: true }] }, "fields.1.type"],
  ["option without optionData", { fields: [titleField, { id: "a", title: "A", type: "option", required: true }] }, "fields.1.optionData"],
  [
    "text with optionData",
    { fields: [titleField, { id: "a", title: "A", type: "text", required: true, optionData: ["x"] }] },
    "fields.1.optionData",
  ],
  [
    "validation the type does not support",
    { fields: [titleField, { id: "a", title: "A", type: "text", required: true, validations: { max: 3 } }] },
    "fields.1.validations.max",
  ],
  [
    "min above max",
    { fields: [titleField, { id: "a", title: "A", type: "time", required: true, validations: { min: "18:00", max: "08:00" } }] },
    "fields.1.validations.min",
  ],
  [
    "relation field without relation",
    { fields: [titleField, { id: "a", title: "A", type: "relation", required: true }] },
    "fields.1.relation",
  ],
  [
    "relation to a data type that does not exist",
    {
      fields: [
        titleField,
        {
          id: "a",
          title: "A",
          type: "relation",
          required: true,
          relation: { kind: "belongsTo", targetKind: "dataType", target: "0123456789abcdef01234567" },
        },
      ],
    },
    "fields.1.relation.target",
  ],
  ["uniqueTogether with the title", { uniqueTogether: [["dataId", "age"]] }, "uniqueTogether.0.0"],
  [
    "uniqueTogether listed twice",
    {
      uniqueTogether: [
        ["age", "phone"],
        ["phone", "age"],
      ],
    },
    "uniqueTogether.1",
  ],
  [
    "six searchable fields",
    {
      fields: [
        titleField,
        ...Array.from({ length: 5 }, (_, i) => ({ id: `s${i}`, title: `S${i}`, type: "text", required: false, searchable: true })),
      ],
      uniqueTogether: [],
    },
    "fields",
  ],
  ["extension with a title field", { extends: { entity: "user" } }, "fields.0.type"],
  ["extension of an unknown entity", { extends: { entity: "invoice" } }, "extends.entity"],
  ["external-api without config", { provider: "external-api" }, "providerConfig"],
  [
    "external-api to the metadata service",
    { provider: "external-api", providerConfig: { url: "http://169.254.169.254/latest" } },
    "providerConfig.url",
  ],
  [
    "external-api to a private address",
    { provider: "external-api", providerConfig: { url: "https://192.168.0.1/items" } },
    "providerConfig.url",
  ],
  ["external-api to loopback", { provider: "external-api", providerConfig: { url: "http://localhost:9000/items" } }, "providerConfig.url"],
  ["internal with a config", { provider: "internal", providerConfig: { url: "https://api.example.com" } }, "providerConfig"],
  ["unknown attribute", { colour: "blue" }, "colour"],
];

describe("Data types API", () => {
  describe("POST /data-type", () => {
    it("creates a data type and answers 201 with data_type", async () => {
      const { api, organizationId } = newTenant({ sub: "creator-1" });
      const response = await api.post("/data-type", validDataType);
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ status: true, message: "Data type has been created successfully." });
      const dataType = response.body.data_type;
      expect(dataType._id).toMatch(/^[0-9a-f]{24}$/);
      expect(dataType).toMatchObject({
        name: "Customer",
        limitUser: true,
        commonData: false,
        uniqueTogether: [["segment", "phone"]],
        extends: null,
        provider: "internal",
        providerConfig: null,
        createdBy: "creator-1",
        organizationId,
      });
      expect(dataType.fields[0]).toEqual({
        id: "dataId",
        title: "Customer name",
        type: "title",
        required: true,
        unique: true,
        searchable: true,
        show: true,
        optionData: [],
      });
      expect(dataType.fields[2]).toMatchObject({
        id: "segment",
        type: "option",
        required: true,
        optionData: ["retail", "wholesale"],
        searchable: true,
      });
      expect(dataType.fields[2]).not.toHaveProperty("isRequired");
      expect(dataType.fields.map((f: { type: string }) => f.type)).toEqual(["title", "number", "option", "date", "phoneNumber"]);
      expect(dataType.createdTime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(dataType.updatedTime).toBe(dataType.createdTime);
      for (const internal of ["PK", "SK", "version", "titleRule", "GSI1PK"]) expect(dataType).not.toHaveProperty(internal);
    });

    it("forces the title field's id and flags whatever is sent", async () => {
      const { api } = newTenant();
      const dataType = await createDataType(api, {
        fields: [{ type: "title", title: "Code", id: "code", required: false, unique: false, searchable: false, show: false }],
        uniqueTogether: [],
      });
      expect(dataType.fields[0]).toMatchObject({ id: "dataId", required: true, unique: true, searchable: true, show: true });
    });

    it("creates an external-api type and never echoes the key in full", async () => {
      const { api } = newTenant();
      const dataType = await createDataType(api, {
        provider: "external-api",
        providerConfig: { url: "https://api.example.com/customers", key: "sk_live_0123456789wxyz" },
      });
      expect(dataType.providerConfig).toEqual({ url: "https://api.example.com/customers", key: "****wxyz" });
      const read = await api.get(`/data-type/${dataType._id}`);
      expect(JSON.stringify(read.body)).not.toContain("sk_live_0123456789wxyz");
    });

    it("creates an extension type: no title, commonData forced true", async () => {
      const { api } = newTenant();
      const dataType = await createDataType(api, {
        name: "User extras",
        fields: [{ id: "badge", title: "Badge", type: "text", required: false }],
        uniqueTogether: [],
        extends: { entity: "user" },
      });
      expect(dataType).toMatchObject({ extends: { entity: "user" }, commonData: true });
    });

    it.each(invalidBodies)("rejects %s with 400 naming the field, storing nothing", async (_case, overrides, field) => {
      const { api } = newTenant();
      const response = await api.post("/data-type", { ...validDataType, ...overrides });
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.message).toBe("Bad request - invalid parameters provided.");
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect((await api.get("/data-types")).body.data_types).toEqual([]);
    });

    it("answers 409 for a name already used in the organization (any letter case), and frees nothing else", async () => {
      const { api } = newTenant();
      await createDataType(api);
      const response = await api.post("/data-type", { ...validDataType, name: "  CUSTOMER " });
      expect(response.status).toBe(409);
      expect(response.body).toMatchObject({ status: false, failedCode: "dt-001" });
      expect(await listNames(api)).toEqual(["Customer"]);
    });

    it("lets two organizations use the same name", async () => {
      await createDataType(newTenant().api);
      await createDataType(newTenant().api);
    });

    it("race: two concurrent creates of the same name → exactly one 201", async () => {
      const { api } = newTenant();
      const responses = await Promise.all(Array.from({ length: 6 }, () => api.post("/data-type", validDataType)));
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
      expect(await listNames(api)).toEqual(["Customer"]);
    });

    it("race: concurrent creates of an extension for the same entity → exactly one 201", async () => {
      const { api } = newTenant();
      const responses = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          api.post("/data-type", {
            name: `Vehicle extras ${i}`,
            fields: [{ id: "colour", title: "Colour", type: "text", required: false }],
            extends: { entity: "vehicle" },
          }),
        ),
      );
      expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
      // Losers see the guard (dt-002) or, when DynamoDB cancels a conflicting transaction, the retry answer (sys-410).
      expect(
        responses.filter((r) => r.status !== 201).every((r) => r.status === 409 && ["dt-002", "sys-410"].includes(r.body.failedCode)),
      ).toBe(true);
      expect(await listNames(api)).toHaveLength(1);
    });

    it("accepts a relation to a type of the same organization only", async () => {
      const owner = newTenant();
      const other = newTenant();
      const order = await createDataType(owner.api, { name: "Order", uniqueTogether: [] });
      const withRelation = {
        name: "Invoice",
        fields: [
          titleField,
          {
            id: "order",
            title: "Order",
            type: "relation",
            required: true,
            relation: { kind: "belongsTo", targetKind: "dataType", target: order._id },
          },
        ],
      };
      expect((await owner.api.post("/data-type", withRelation)).status).toBe(201);
      const foreign = await other.api.post("/data-type", withRelation);
      expect(refusal(foreign)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(foreign.body.errors[0].field).toBe("fields.1.relation.target");
      expect((await other.api.get("/data-types")).body.data_types).toEqual([]);
    });
  });

  describe("GET /data-type/{dataTypeId}/", () => {
    it("reads a data type with or without the trailing slash", async () => {
      const { api } = newTenant();
      const created = await createDataType(api);
      for (const path of [`/data-type/${created._id}/`, `/data-type/${created._id}`]) {
        const response = await api.get(path);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ status: true, message: "Data type found.", data_type: created });
      }
    });

    it.each(["0123456789abcdef01234567", "not-an-id"])("answers 404 for unknown id %s", async (id) => {
      const { api } = newTenant();
      const response = await api.get(`/data-type/${id}/`);
      expect(refusal(response)).toEqual({ status: 404, failedCode: "sys-404" });
      expect(response.body).toMatchObject({ status: false, message: "Data not found" });
    });
  });

  describe("GET /data-types", () => {
    it("pages through all types, sorted by name, with an opaque cursor", async () => {
      const { api } = newTenant();
      for (const name of ["delta", "Alpha", "charlie", "Bravo", "echo"]) await createDataType(api, { name });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const response = await api.get(`/data-types?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(response.status).toBe(200);
        expect(response.body.data_types.length).toBeLessThanOrEqual(2);
        seen.push(...response.body.data_types.map((t: { name: string }) => t.name));
        cursor = response.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(["Alpha", "Bravo", "charlie", "delta", "echo"]);
    });

    it("filters by a case-insensitive name prefix", async () => {
      const { api } = newTenant();
      for (const name of ["Customer", "customer visits", "Cust#1", "Order"]) await createDataType(api, { name });
      expect(await listNames(api, "?name=CUSTOMER")).toEqual(["Customer", "customer visits"]);
      expect(await listNames(api, `?name=${encodeURIComponent("cust#")}`)).toEqual(["Cust#1"]);
      expect(await listNames(api, "?name=zzz")).toEqual([]);
    });

    it.each([
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["cursor=garbage", "cursor"],
      ["colour=red", "colour"],
    ])("rejects the query %s with 400", async (query, field) => {
      const { api } = newTenant();
      const response = await api.get(`/data-types?${query}`);
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });
  });

  describe("tenancy", () => {
    it("another organization cannot read, list, replace, patch or delete the type", async () => {
      const owner = newTenant();
      const other = newTenant();
      const created = await createDataType(owner.api);
      expect(refusal(await other.api.get(`/data-type/${created._id}/`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await other.api.put(`/data-type/${created._id}`, validDataType))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await other.api.patch(`/data-type/${created._id}`, { limitUser: false }))).toEqual({
        status: 404,
        failedCode: "sys-404",
      });
      expect(refusal(await other.api.delete(`/data-type/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect((await other.api.get("/data-types")).body.data_types).toEqual([]);
      expect((await owner.api.get(`/data-type/${created._id}`)).body.data_type).toEqual(created);
    });

    it("rejects another organization's cursor", async () => {
      const owner = newTenant();
      for (const name of ["a", "b", "c"]) await createDataType(owner.api, { name });
      const firstPage = await owner.api.get("/data-types?limit=1");
      const response = await newTenant().api.get(`/data-types?limit=1&cursor=${firstPage.body.nextCursor}`);
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors[0].field).toBe("cursor");
    });
  });

  describe("PUT /data-type/{dataTypeId}", () => {
    it("replaces the type, keeping id, creator and creation time", async () => {
      const { api } = newTenant();
      const created = await createDataType(api);
      const body = { name: "Client", fields: [titleField, { id: "email", title: "Email", type: "text", required: true }] };
      const response = await api.put(`/data-type/${created._id}`, body);
      expect(response.status).toBe(200);
      expect(response.body.message).toBe("Data type has been updated successfully.");
      expect(response.body.data_type).toMatchObject({
        _id: created._id,
        name: "Client",
        limitUser: false,
        uniqueTogether: [],
        createdTime: created.createdTime,
        createdBy: created.createdBy,
      });
      expect((await api.get(`/data-type/${created._id}`)).body.data_type).toEqual(response.body.data_type);
    });

    it.each(invalidBodies)("rejects %s and leaves the stored type unchanged", async (_case, overrides, field) => {
      const { api } = newTenant();
      const created = await createDataType(api);
      const response = await api.put(`/data-type/${created._id}`, { ...validDataType, ...overrides });
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect((await api.get(`/data-type/${created._id}`)).body.data_type).toEqual(created);
    });

    it("rejects a commonData change", async () => {
      const { api } = newTenant();
      const created = await createDataType(api);
      const response = await api.put(`/data-type/${created._id}`, { ...validDataType, commonData: true });
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors[0]).toMatchObject({ field: "commonData" });
      expect((await api.get(`/data-type/${created._id}`)).body.data_type.commonData).toBe(false);
    });

    it("renaming moves the name guard: the old name is free, a taken name is a 409", async () => {
      const { api } = newTenant();
      const created = await createDataType(api);
      await createDataType(api, { name: "Order" });
      expect((await api.put(`/data-type/${created._id}`, { ...validDataType, name: "Client" })).status).toBe(200);
      await createDataType(api, { name: "Customer" });
      const clash = await api.put(`/data-type/${created._id}`, { ...validDataType, name: "order" });
      expect(clash.status).toBe(409);
      expect(clash.body.failedCode).toBe("dt-001");
      expect(await listNames(api)).toEqual(["Client", "Customer", "Order"]);
    });

    it("changing only the letter case of the name keeps the type's own guard", async () => {
      const { api } = newTenant();
      const created = await createDataType(api);
      expect((await api.put(`/data-type/${created._id}`, { ...validDataType, name: "CUSTOMER" })).status).toBe(200);
      await expectRefused(
        api,
        { method: "POST", path: "/data-type", body: { ...validDataType, name: "customer" } },
        { status: 409, failedCode: "dt-001" },
      );
    });

    it("keeps the stored key when the masked key is sent back", async () => {
      const { api, organizationId } = newTenant();
      const created = await createDataType(api, {
        provider: "external-api",
        providerConfig: { url: "https://api.example.com/c", key: "sk_live_0123456789wxyz" },
      });
      const response = await api.put(`/data-type/${created._id}`, {
        ...validDataType,
        provider: "external-api",
        providerConfig: created.providerConfig,
      });
      expect(response.status).toBe(200);
      expect((await dataTypeReader.findById(organizationId, created._id))?.dataType.providerConfig?.key).toBe("sk_live_0123456789wxyz");
    });

    it("refuses a masked key sent with a URL on another origin (400 naming providerConfig.key), keeping the stored config", async () => {
      const { api, organizationId } = newTenant();
      const providerConfig = { url: "https://api.example.com/c", key: "sk_live_0123456789wxyz" };
      const created = await createDataType(api, { provider: "external-api", providerConfig });
      const redirected = { url: "https://attacker.example/collect", key: created.providerConfig.key };
      for (const response of [
        await api.patch(`/data-type/${created._id}`, { providerConfig: redirected }),
        await api.put(`/data-type/${created._id}`, { ...validDataType, provider: "external-api", providerConfig: redirected }),
        await api.patch(`/data-type/${created._id}`, { providerConfig: { url: redirected.url } }),
      ]) {
        expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
        expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual(["providerConfig.key"]);
      }
      expect((await dataTypeReader.findById(organizationId, created._id))?.dataType.providerConfig).toEqual(providerConfig);
    });

    it("answers 409 while the type is locked by an import, changing nothing", async () => {
      const { api, organizationId } = newTenant();
      const created = await createDataType(api);
      await setStoredAttributes(organizationId, created._id, { locked: true });
      const response = await api.put(`/data-type/${created._id}`, { ...validDataType, name: "Client" });
      expect(response.status).toBe(409);
      expect(response.body.failedCode).toBe("dt-003");
      expect((await api.get(`/data-type/${created._id}`)).body.data_type).toMatchObject({ name: "Customer", locked: true });
      await setStoredAttributes(organizationId, created._id, { locked: false });
      expect((await api.put(`/data-type/${created._id}`, { ...validDataType, name: "Client" })).status).toBe(200);
    });

    it("lets a legacy type above 5 searchable fields be saved as long as the count does not grow", async () => {
      const { api, organizationId } = newTenant();
      const created = await createDataType(api, { uniqueTogether: [] });
      const searchable = (n: number) =>
        Array.from({ length: n }, (_, i) => ({
          id: `s${i}`,
          title: `S${i}`,
          type: "text",
          required: false,
          searchable: true,
          unique: false,
          show: true,
          optionData: [],
        }));
      await setStoredAttributes(organizationId, created._id, { fields: [created.fields[0], ...searchable(6)] });
      const body = (n: number) => ({ name: "Customer", fields: [titleField, ...searchable(n)] });
      expect((await api.put(`/data-type/${created._id}`, body(6))).status).toBe(200);
      const grown = await expectRefused(
        api,
        { method: "PUT", path: `/data-type/${created._id}`, body: body(7) },
        { status: 400, failedCode: "sys-400", unchanged: `/data-type/${created._id}` },
      );
      expect(grown.body.errors[0].field).toBe("fields");
    });

    it("adds a hasMany field once the target holds the inverse belongsTo field", async () => {
      const { api } = newTenant();
      const customer = await createDataType(api, { uniqueTogether: [] });
      const order = await createDataType(api, {
        name: "Order",
        uniqueTogether: [],
        fields: [
          titleField,
          {
            id: "customer",
            title: "Customer",
            type: "relation",
            required: true,
            relation: { kind: "belongsTo", targetKind: "dataType", target: customer._id },
          },
        ],
      });
      const orders = (via: string) => ({
        id: "orders",
        title: "Orders",
        type: "relation",
        required: false,
        relation: { kind: "hasMany", targetKind: "dataType", target: order._id, via },
      });
      const wrongVia = await expectRefused(
        api,
        { method: "PATCH", path: `/data-type/${customer._id}`, body: { fields: [...customer.fields, orders("dataId")] } },
        { status: 400, failedCode: "sys-400", unchanged: `/data-type/${customer._id}` },
      );
      expect(wrongVia.body.errors[0].field).toBe("fields.5.relation.via");
      const response = await api.patch(`/data-type/${customer._id}`, { fields: [...customer.fields, orders("customer")] });
      expect(response.status).toBe(200);
      expect(response.body.data_type.fields[5].relation).toEqual({
        kind: "hasMany",
        targetKind: "dataType",
        target: order._id,
        via: "customer",
      });
    });

    it("moves the extension guard when the entity changes", async () => {
      const { api } = newTenant();
      const extension = {
        name: "Extras",
        fields: [{ id: "colour", title: "Colour", type: "text", required: false }],
        uniqueTogether: [],
        extends: { entity: "vehicle" },
      };
      const created = await createDataType(api, extension);
      expect((await api.put(`/data-type/${created._id}`, { ...extension, extends: { entity: "hub" } })).status).toBe(200);
      expect((await api.post("/data-type", { ...extension, name: "Vehicle extras" })).status).toBe(201);
      const clash = await api.post("/data-type", { ...extension, name: "Hub extras", extends: { entity: "hub" } });
      expect(clash.status).toBe(409);
      expect(clash.body.failedCode).toBe("dt-002");
      expect((await listNames(api)).sort()).toEqual(["Extras", "Vehicle extras"]);
    });
  });

  describe("PATCH /data-type/{dataTypeId}", () => {
    it("changes only the attributes sent", async () => {
      const { api } = newTenant();
      const created = await createDataType(api);
      const response = await api.patch(`/data-type/${created._id}`, { limitUser: false, name: "Client" });
      expect(response.status).toBe(200);
      expect(response.body.data_type).toEqual({ ...created, limitUser: false, name: "Client", updatedTime: expect.any(String) });
    });

    it("validates the merged type: dropping a field named by uniqueTogether is rejected", async () => {
      const { api } = newTenant();
      const created = await createDataType(api);
      const response = await api.patch(`/data-type/${created._id}`, {
        fields: [titleField, { id: "segment", title: "S", type: "option", required: true, optionData: ["a"] }],
      });
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain("uniqueTogether.0.1");
      expect((await api.get(`/data-type/${created._id}`)).body.data_type).toEqual(created);
    });

    it.each(invalidBodies.filter(([, overrides]) => !Object.values(overrides).includes(undefined)))(
      "rejects %s and leaves the stored type unchanged",
      async (_case, overrides, field) => {
        const { api } = newTenant();
        const created = await createDataType(api);
        const response = await api.patch(`/data-type/${created._id}`, overrides);
        expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
        expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
        expect((await api.get(`/data-type/${created._id}`)).body.data_type).toEqual(created);
      },
    );

    it("rejects an empty patch", async () => {
      const { api } = newTenant();
      const created = await createDataType(api);
      await expectRefused(
        api,
        { method: "PATCH", path: `/data-type/${created._id}`, body: {} },
        { status: 400, failedCode: "sys-400", unchanged: `/data-type/${created._id}` },
      );
    });
  });

  describe("DELETE /data-type/{dataTypeId}", () => {
    it("deletes the type and frees its name and extension entity; a second delete is 404", async () => {
      const { api } = newTenant();
      const extension = {
        name: "Extras",
        fields: [{ id: "colour", title: "Colour", type: "text", required: false }],
        uniqueTogether: [],
        extends: { entity: "role" },
      };
      const created = await createDataType(api, extension);
      const response = await api.delete(`/data-type/${created._id}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: true, message: "Data type has been deleted successfully." });
      expect(refusal(await api.get(`/data-type/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      await expectRefused(api, { method: "DELETE", path: `/data-type/${created._id}` }, { status: 404, failedCode: "sys-404" });
      await createDataType(api, extension);
    });

    it("answers 409 while the type still has records, and keeps it", async () => {
      const { api, organizationId } = newTenant();
      const created = await createDataType(api);
      await putRecord(organizationId, created._id);
      const response = await api.delete(`/data-type/${created._id}`);
      expect(response.status).toBe(409);
      expect(response.body).toMatchObject({ status: false, failedCode: "dt-004", message: expect.stringContaining("records") });
      expect((await api.get(`/data-type/${created._id}`)).body.data_type).toEqual(created);
      // The delete fence was lifted: the type can still be saved.
      expect((await api.patch(`/data-type/${created._id}`, { limitUser: false })).status).toBe(200);
    });

    it("answers 409 while the type is locked", async () => {
      const { api, organizationId } = newTenant();
      const created = await createDataType(api);
      await setStoredAttributes(organizationId, created._id, { locked: true });
      await expectRefused(
        api,
        { method: "DELETE", path: `/data-type/${created._id}` },
        { status: 409, failedCode: "dt-003", unchanged: `/data-type/${created._id}` },
      );
      expect((await api.get(`/data-type/${created._id}`)).status).toBe(200);
    });
  });

  it.each([
    ["POST", "/data-type"],
    ["GET", "/data-types"],
    ["GET", "/data-type/0123456789abcdef01234567/"],
    ["PUT", "/data-type/0123456789abcdef01234567"],
    ["PATCH", "/data-type/0123456789abcdef01234567"],
    ["DELETE", "/data-type/0123456789abcdef01234567"],
  ])("%s %s without a token answers 401", async (method, path) => {
    const response = await apiClient(undefined).request(
      method,
      path,
      method === "GET" || method === "DELETE" ? {} : { body: validDataType },
    );
    expect(refusal(response)).toEqual({ status: 401, failedCode: "sys-401" });
    expect(response.body.status).toBe(false);
  });
});
