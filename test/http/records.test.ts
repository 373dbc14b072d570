import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { expectRefused, refusal } from "#test/support/refusals";

/** A tenant with two hubs and a "Customer" data type exercising most field types. */
async function createHub(api: ApiClient, name: string): Promise<string> {
  const response = await api.post("/hub", { name, address: `${name} street 1`, lat: -6.2, lng: 106.8 });
  expect(response.status).toBe(201);
  return response.body.data._id;
}

const customerType = {
  name: "Customer",
  fields: [
    { type: "title", title: "Name" },
    { id: "email", title: "Email", type: "text", required: false, unique: true, searchable: true },
    { id: "age", title: "Age", type: "number", required: false, validations: { min: 0, max: 150, decimals: 0 } },
    { id: "segment", title: "Segment", type: "option", required: true, optionData: ["retail", "wholesale"] },
    { id: "tags", title: "Tags", type: "multiOption", required: false, optionData: ["a", "b", "c"] },
    { id: "vip", title: "VIP", type: "boolean", required: false },
    { id: "city", title: "City", type: "text", required: false, searchable: true },
    { id: "since", title: "Since", type: "date", required: false, default: "2026-01-01" },
    { id: "until", title: "Until", type: "date", required: false, validations: { min: { ref: "since" } } },
    { id: "phone", title: "Phone", type: "phoneNumber", required: false },
    { id: "location", title: "Location", type: "geolocation", required: false },
    { id: "open", title: "Open", type: "time", required: false, inputType: "range" },
  ],
  uniqueTogether: [["tags", "vip"]],
};

async function createDataType(api: ApiClient, body: Record<string, unknown>) {
  const response = await api.post("/data-type", body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data_type as { _id: string; name: string };
}

async function setup(claims: Parameters<typeof newTenant>[0] = {}) {
  const tenant = newTenant(claims);
  const hubA = await createHub(tenant.api, "A");
  const hubB = await createHub(tenant.api, "B");
  const type = await createDataType(tenant.api, customerType);
  const record = (overrides: Record<string, unknown> = {}) => ({
    dataTypeId: type._id,
    hubId: hubA,
    dataId: "Acme Corp",
    segment: "retail",
    ...overrides,
  });
  return { ...tenant, hubA, hubB, type, record };
}

async function create(api: ApiClient, body: Record<string, unknown>) {
  const response = await api.post("/data", body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data;
}

const listOf = async (api: ApiClient, query: string) => {
  const response = await api.get(`/data?${query}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as Array<Record<string, unknown>>;
};

describe("POST /data", () => {
  it("creates a record with normalized values, defaults and the documented shape", async () => {
    const { api, organizationId, hubA, type, record } = await setup();
    const response = await api.post(
      "/data",
      record({
        email: "a@acme.test",
        age: 40,
        tags: ["b", "a"],
        phone: "+62 812-3456-789",
        location: "-6.2,106.8",
        open: { from: "08:00", to: "17:00" },
      }),
    );
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ status: true, message: expect.any(String) });
    const data = response.body.data;
    expect(Object.keys(data)).toEqual([
      "_id",
      "dataId",
      "dataTypeId",
      "data_type",
      "hubId",
      "email",
      "age",
      "segment",
      "tags",
      "since",
      "phone",
      "location",
      "open",
      "organizationId",
      "createdBy",
      "createdTime",
      "updatedTime",
    ]);
    expect(data).toMatchObject({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      dataId: "Acme Corp",
      dataTypeId: type._id,
      data_type: { _id: type._id, name: "Customer" },
      hubId: hubA,
      since: "2026-01-01",
      phone: "+628123456789",
      location: { lat: -6.2, lng: 106.8 },
      organizationId,
      createdBy: "user-1",
      createdTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
    });
    const read = await api.get(`/data/type/Customer/${encodeURIComponent("Acme Corp")}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(data);
  });

  it("accepts dataTypeName instead of dataTypeId", async () => {
    const { api, hubA } = await setup();
    const data = await create(api, { dataTypeName: "customer", hubId: hubA, dataId: "By Name", segment: "retail" });
    expect(data.data_type.name).toBe("Customer");
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ["no data type", { dataTypeId: undefined }, "dataTypeId"],
    ["unknown data type id", { dataTypeId: "ffffffffffffffffffffffff" }, "dataTypeId"],
    ["unknown data type name", { dataTypeId: undefined, dataTypeName: "Nope" }, "dataTypeName"],
    ["missing dataId", { dataId: undefined }, "dataId"],
    ["dataId with a symbol", { dataId: "Acme!" }, "dataId"],
    ["dataId with a leading space", { dataId: " Acme" }, "dataId"],
    ["dataId with a double space", { dataId: "Acme  Corp" }, "dataId"],
    ["dataId too long", { dataId: "x".repeat(201) }, "dataId"],
    ["missing hubId", { hubId: undefined }, "hubId"],
    ["hub that does not exist", { hubId: "ffffffffffffffffffffffff" }, "hubId"],
    ["missing required field", { segment: undefined }, "segment"],
    ["option not listed", { segment: "vip" }, "segment"],
    ["number as text", { age: "40" }, "age"],
    ["number above max", { age: 151 }, "age"],
    ["too many decimals", { age: 40.5 }, "age"],
    ["boolean as text", { vip: "yes" }, "vip"],
    ["multiOption with an unknown option", { tags: ["z"] }, "tags"],
    ["date before its ref", { since: "2026-05-01", until: "2026-04-30" }, "until"],
    ["bad date", { since: "2026-13-01" }, "since"],
    ["bad phone", { phone: "0812" }, "phone"],
    ["latitude out of range", { location: { lat: 91, lng: 0 } }, "location"],
    ["range from after to", { open: { from: "18:00", to: "08:00" } }, "open"],
    ["unknown field", { color: "red" }, "color"],
    ["a server-set key in another letter case (not ignored)", { updatedby: "x" }, "updatedby"],
  ];
  it.each(invalid)("rejects %s with a 400 naming the field, storing nothing", async (_, overrides, field) => {
    const { api, type, record } = await setup();
    const response = await api.post("/data", record(overrides));
    expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(response.body).toMatchObject({ status: false, message: "Bad request - invalid parameters provided." });
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    expect(await listOf(api, `dataTypeId=${type._id}`)).toEqual([]);
  });

  it.each(["__proto__", "constructor"])("rejects the body key %s as unknown on POST, PUT and PATCH, storing nothing", async (key) => {
    const { api, type, record } = await setup();
    const raw = (body: Record<string, unknown>) => ({
      rawBody: `${JSON.stringify(body).slice(0, -1)},"${key}":{"polluted":true}}`,
      headers: { "content-type": "application/json" },
    });
    const posted = await api.request("POST", "/data", raw(record()));
    expect(posted.status, JSON.stringify(posted.body)).toBe(400);
    expect(posted.body.errors).toEqual([{ field: key, message: expect.stringContaining("unknown field") }]);
    expect(await listOf(api, `dataTypeId=${type._id}`)).toEqual([]);
    const stored = await create(api, record());
    for (const method of ["PUT", "PATCH"]) {
      const response = await api.request(method, "/data/type/Customer/Acme%20Corp", raw({ segment: "wholesale" }));
      expect(response.status, `${method} ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.errors).toEqual([{ field: key, message: expect.stringContaining("unknown field") }]);
    }
    expect((await api.get("/data/type/Customer/Acme%20Corp")).body.data).toEqual(stored);
  });

  it("rejects a hub the token does not allow, and hubId on a commonData type", async () => {
    const { api, organizationId, hubB, type, record } = await setup();
    const restricted = apiClient(tokenFor({ organizationId, hubIds: ["some-other-hub"] }));
    const denied = await restricted.post("/data", record({ hubId: hubB }));
    expect(refusal(denied)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(denied.body.errors[0].field).toBe("hubId");
    const common = await createDataType(api, { name: "Shared", commonData: true, fields: [{ type: "title", title: "Name" }] });
    const withHub = await api.post("/data", { dataTypeId: common._id, hubId: hubB, dataId: "S1" });
    expect(refusal(withHub)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(withHub.body.errors[0].field).toBe("hubId");
    const created = await create(api, { dataTypeId: common._id, dataId: "S1" });
    expect(created.hubId).toBeNull();
    expect(await listOf(api, `dataTypeId=${type._id}`)).toEqual([]);
  });

  it("applies the no-space title rule of a type imported from the earlier version", async () => {
    const { api, organizationId, hubA, type } = await setup();
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.dataType(organizationId, type._id),
        UpdateExpression: "SET titleRule = :rule",
        ExpressionAttributeValues: { ":rule": "no-space" },
      }),
    );
    const spaced = await api.post("/data", { dataTypeId: type._id, hubId: hubA, dataId: "Two Words", segment: "retail" });
    expect(refusal(spaced)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(spaced.body.errors[0].field).toBe("dataId");
    expect(await listOf(api, `dataTypeId=${type._id}`)).toEqual([]);
    await create(api, { dataTypeId: type._id, hubId: hubA, dataId: "One_Word-1", segment: "retail" });
  });
});

describe("Uniqueness", () => {
  it("keeps dataId unique per hub and type", async () => {
    const { api, hubB, type, record } = await setup();
    await create(api, record());
    const again = await api.post("/data", record());
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ status: false, failedCode: "data-001", errors: [{ field: "dataId" }] });
    expect((await listOf(api, `dataTypeId=${type._id}`)).map((item) => item.dataId)).toEqual(["Acme Corp"]);
    await create(api, record({ hubId: hubB }));
  });

  it("keeps dataId unique across hubs for a commonData type", async () => {
    const { api } = await setup();
    const common = await createDataType(api, { name: "Shared", commonData: true, fields: [{ type: "title", title: "Name" }] });
    await create(api, { dataTypeId: common._id, dataId: "S1" });
    await expectRefused(
      api,
      { method: "POST", path: "/data", body: { dataTypeId: common._id, dataId: "S1" } },
      { status: 409, failedCode: "data-001" },
    );
  });

  it("enforces unique fields per hub and names the field", async () => {
    const { api, hubB, type, record } = await setup();
    await create(api, record({ email: "x@acme.test" }));
    const clash = await api.post("/data", record({ dataId: "Other", email: "x@acme.test" }));
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({ failedCode: "data-002", errors: [{ field: "email" }] });
    expect((await listOf(api, `dataTypeId=${type._id}`)).map((item) => item.dataId)).toEqual(["Acme Corp"]);
    await create(api, record({ dataId: "Other", hubId: hubB, email: "x@acme.test" }));
  });

  it("enforces uniqueTogether with sets in any order and an absent boolean as false; an empty member is not checked", async () => {
    const { api, record } = await setup();
    await create(api, record({ dataId: "R1", tags: ["a", "b"] }));
    const sameSet = await api.post("/data", record({ dataId: "R2", tags: ["b", "a"], vip: false }));
    expect(refusal(sameSet)).toEqual({ status: 409, failedCode: "data-002" });
    expect(sameSet.body.errors.map((error: { field: string }) => error.field).sort()).toEqual(["tags", "vip"]);
    await create(api, record({ dataId: "R3", tags: ["a", "b"], vip: true }));
    await create(api, record({ dataId: "R4" }));
    await create(api, record({ dataId: "R5" }));
  });

  it("lets exactly one of 20 concurrent creates of the same dataId succeed", async () => {
    const { api, type, record } = await setup();
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => api.post("/data", record({ dataId: "Race", city: `c${i}` }))));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(19);
    // Every loser lost on the dataId itself (not on a concurrent-transaction conflict or another guard).
    const conflicts = responses.filter((response) => response.status === 409).map((response) => response.body.failedCode);
    expect(conflicts).toEqual(Array(19).fill("data-001"));
    expect(await listOf(api, `dataTypeId=${type._id}`)).toHaveLength(1);
  });

  it("lets exactly one of concurrent creates with the same unique value succeed", async () => {
    const { api, type, record } = await setup();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api.post("/data", record({ dataId: `U${i}`, email: "same@acme.test" }))),
    );
    expect(responses.filter((response) => response.status === 201)).toHaveLength(1);
    expect(await listOf(api, `dataTypeId=${type._id}`)).toHaveLength(1);
  });
});

describe("GET /data/{dataId} and /data/type/{name}/{dataId}", () => {
  it("finds a record without its type when only one type holds it, and asks for the type or hub otherwise", async () => {
    const { api, hubA, hubB, type, record } = await setup();
    const other = await createDataType(api, { name: "Supplier", fields: [{ type: "title", title: "Name" }] });
    await create(api, record({ dataId: "Only" }));
    expect((await api.get("/data/Only")).body.data.dataId).toBe("Only");

    await create(api, record({ dataId: "Twice" }));
    await create(api, { dataTypeId: other._id, hubId: hubA, dataId: "Twice" });
    const ambiguous = await api.get("/data/Twice");
    expect(refusal(ambiguous)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(ambiguous.body.errors[0]).toMatchObject({ field: "dataTypeId", message: expect.stringContaining("Customer") });
    expect(ambiguous.body.errors[0].message).toContain("Supplier");
    expect((await api.get("/data/Twice?dataTypeName=Supplier")).body.data.dataTypeId).toBe(other._id);
    expect((await api.get(`/data/Twice?dataTypeId=${type._id}`)).body.data.dataTypeId).toBe(type._id);

    await create(api, record({ dataId: "Twice", hubId: hubB }));
    const twoHubs = await api.get(`/data/type/Customer/Twice`);
    expect(refusal(twoHubs)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(twoHubs.body.errors[0].field).toBe("hubId");
    expect((await api.get(`/data/type/Customer/Twice?hubId=${hubB}`)).body.data.hubId).toBe(hubB);
  });

  it("answers 404 for unknown records, unknown types, other organizations and hubs outside the token", async () => {
    const { api, organizationId, hubB, record } = await setup();
    await create(api, record({ dataId: "Mine", hubId: hubB }));
    expect(refusal(await api.get("/data/Nope"))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await api.get("/data/type/Nope/Mine"))).toEqual({ status: 404, failedCode: "sys-404" });
    const stranger = newTenant();
    expect(refusal(await stranger.api.get("/data/Mine"))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await stranger.api.get("/data/type/Customer/Mine"))).toEqual({ status: 404, failedCode: "sys-404" });
    const restricted = apiClient(tokenFor({ organizationId, hubIds: ["another-hub"] }));
    expect(refusal(await restricted.get("/data/Mine"))).toEqual({ status: 404, failedCode: "sys-404" });
  });
});

describe("GET /data", () => {
  it("pages a type's records and filters by hub and by the token's hubs", async () => {
    const { api, organizationId, hubA, hubB, type, record } = await setup();
    for (const [index, hubId] of [hubA, hubA, hubA, hubB].entries()) await create(api, record({ dataId: `R${index}`, hubId }));
    const first = await api.get(`/data?dataTypeId=${type._id}&limit=3`);
    expect(first.body.data).toHaveLength(3);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await api.get(`/data?dataTypeId=${type._id}&limit=3&cursor=${first.body.nextCursor}`);
    expect([...first.body.data, ...second.body.data].map((item: { dataId: string }) => item.dataId).sort()).toEqual([
      "R0",
      "R1",
      "R2",
      "R3",
    ]);
    expect((await listOf(api, `dataTypeName=Customer&hubId=${hubB}`)).map((item) => item.dataId)).toEqual(["R3"]);
    const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubB] }));
    expect((await restricted.get(`/data?dataTypeId=${type._id}`)).body.data.map((item: { dataId: string }) => item.dataId)).toEqual(["R3"]);
    expect(refusal(await restricted.get(`/data?dataTypeId=${type._id}&hubId=${hubA}`))).toEqual({ status: 400, failedCode: "sys-400" });
  });

  it("rejects a missing type, a foreign type, a tampered cursor and unknown fields", async () => {
    const { api, type } = await setup();
    expect(refusal(await newTenant().api.get(`/data?dataTypeId=${type._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await api.get(`/data?dataTypeId=${type._id}&cursor=bm9wZQ`))).toEqual({ status: 400, failedCode: "sys-400" });
    const unknown = await api.get(`/data?dataTypeId=${type._id}&fields=nope`);
    expect(refusal(unknown)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(unknown.body.errors[0].field).toBe("fields");
  });

  it("searches searchable fields by word prefix, ignoring case and accents, and projects fields", async () => {
    const { api, type, record } = await setup();
    await create(api, record({ dataId: "Café Central", city: "Bandung" }));
    await create(api, record({ dataId: "Central Park", city: "Jakarta", email: "park@central.test" }));
    await create(api, record({ dataId: "Decentral", city: "Surabaya" }));
    await create(api, record({ dataId: "Other", segment: "retail", tags: ["c"] }));
    const names = async (q: string) =>
      (await listOf(api, `dataTypeId=${type._id}&q=${encodeURIComponent(q)}`)).map((item) => item.dataId).sort();
    expect(await names("CENT")).toEqual(["Café Central", "Central Park"]);
    expect(await names("cafe")).toEqual(["Café Central"]);
    expect(await names("jak")).toEqual(["Central Park"]);
    expect(await names("central band")).toEqual(["Café Central"]);
    expect(await names("retail")).toEqual([]);
    expect(await names("zzz")).toEqual([]);
    const projected = await listOf(api, `dataTypeId=${type._id}&q=bandung&fields=city,hubId`);
    expect(projected).toEqual([{ _id: expect.any(String), dataId: "Café Central", hubId: expect.any(String), city: "Bandung" }]);
    expect(refusal(await api.get(`/data?dataTypeId=${type._id}&q=${encodeURIComponent("--")}`))).toEqual({
      status: 400,
      failedCode: "sys-400",
    });
  });
});

describe("Field accessibility (view/data hiddenFields)", () => {
  it("omits hidden fields, answers 403 when fields names them, and leaves writes alone", async () => {
    const { api, organizationId, type, record } = await setup();
    const hiddenToken = tokenFor({
      organizationId,
      permissionDetails: [{ permissionName: "view/data", dataTypeId: type._id, hiddenFields: ["email", "age"] }],
    });
    const limited = apiClient(hiddenToken);
    const created = await limited.post("/data", record({ email: "h@acme.test", age: 33, city: "Medan" }));
    expect(created.status).toBe(201);
    const read = await limited.get("/data/type/Customer/Acme%20Corp");
    expect(read.body.data).not.toHaveProperty("email");
    expect(read.body.data).not.toHaveProperty("age");
    expect(read.body.data.city).toBe("Medan");
    expect((await limited.get(`/data?dataTypeId=${type._id}`)).body.data[0]).not.toHaveProperty("email");
    const forbidden = await limited.get(`/data?dataTypeId=${type._id}&fields=city,email`);
    expect(refusal(forbidden)).toEqual({ status: 403, failedCode: "data-403" });
    expect(forbidden.body).toMatchObject({ status: false, restrictedFields: ["email"] });
    expect(refusal(await limited.get("/data/Acme%20Corp?fields=age"))).toEqual({ status: 403, failedCode: "data-403" });
    expect(refusal(await limited.get("/data/type/Customer/Acme%20Corp?fields=age"))).toEqual({ status: 403, failedCode: "data-403" });
    expect((await limited.get("/data/type/Customer/Acme%20Corp?fields=city")).body.data).toEqual({
      _id: expect.any(String),
      dataId: "Acme Corp",
      city: "Medan",
    });
    // A hidden field cannot be found through q either.
    expect((await limited.get(`/data?dataTypeId=${type._id}&q=h`)).body.data).toEqual([]);
    expect((await api.get(`/data?dataTypeId=${type._id}&q=h`)).body.data).toHaveLength(1);
    const patched = await limited.patch("/data/type/Customer/Acme%20Corp", { age: 34 });
    expect(patched.status).toBe(200);
    expect((await api.get("/data/type/Customer/Acme%20Corp")).body.data.age).toBe(34);
  });
});

describe("Field accessibility in write responses", () => {
  it("leaves hidden fields out of POST, PUT and PATCH responses, like GET, while still writing them", async () => {
    const { api, organizationId, type, record } = await setup();
    const limited = apiClient(
      tokenFor({
        organizationId,
        permissionDetails: [{ permissionName: "view/data", dataTypeId: type._id, hiddenFields: ["email", "age"] }],
      }),
    );
    const created = await limited.post("/data", record({ email: "h@acme.test", age: 33, city: "Medan" }));
    expect(created.status).toBe(201);
    expect(created.body.data).not.toHaveProperty("email");
    expect(created.body.data).not.toHaveProperty("age");
    expect(created.body.data.city).toBe("Medan");
    expect(created.body.data).toEqual((await limited.get("/data/type/Customer/Acme%20Corp")).body.data);

    const patched = await limited.patch("/data/type/Customer/Acme%20Corp", { age: 34, city: "Bogor" });
    expect(patched.status).toBe(200);
    expect(patched.body.data).not.toHaveProperty("email");
    expect(patched.body.data).not.toHaveProperty("age");
    expect(patched.body.data.city).toBe("Bogor");

    const replaced = await limited.put("/data/type/Customer/Acme%20Corp", { segment: "wholesale", email: "p@acme.test", age: 35 });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data).not.toHaveProperty("email");
    expect(replaced.body.data).not.toHaveProperty("age");
    expect(replaced.body.data.segment).toBe("wholesale");

    // The writes happened: the unrestricted token sees the hidden values.
    expect((await api.get("/data/type/Customer/Acme%20Corp")).body.data).toMatchObject({
      email: "p@acme.test",
      age: 35,
      segment: "wholesale",
    });
  });
});

describe("Hidden fields survive a PUT of what the caller read", () => {
  it("keeps the stored values of fields hidden from the caller when a PUT leaves them out; sending one (null too) still writes it", async () => {
    const { api, organizationId, type, record } = await setup();
    const limited = apiClient(
      tokenFor({
        organizationId,
        permissionDetails: [{ permissionName: "view/data", dataTypeId: type._id, hiddenFields: ["email", "age"] }],
      }),
    );
    await create(api, record({ email: "h@acme.test", age: 33, city: "Medan" }));
    // Read what the caller may see, change one field, put it back.
    const {
      _id,
      organizationId: _org,
      createdBy,
      createdTime,
      updatedTime,
      data_type,
      ...seen
    } = (await limited.get("/data/type/Customer/Acme%20Corp")).body.data;
    expect(seen).not.toHaveProperty("email");
    const replaced = await limited.put("/data/type/Customer/Acme%20Corp", { ...seen, city: "Bogor" });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect((await api.get("/data/type/Customer/Acme%20Corp")).body.data).toMatchObject({ email: "h@acme.test", age: 33, city: "Bogor" });
    // The hidden email still guards uniqueness after the PUT.
    await expectRefused(
      api,
      { method: "POST", path: "/data", body: record({ dataId: "Other", email: "h@acme.test" }) },
      { status: 409, failedCode: "data-002" },
    );
    // A visible field left out is still cleared; a hidden field sent is written, null clears it.
    const { city: _city, ...withoutCity } = seen;
    expect((await limited.put("/data/type/Customer/Acme%20Corp", { ...withoutCity, age: 40, email: null })).status).toBe(200);
    const stored = (await api.get("/data/type/Customer/Acme%20Corp")).body.data;
    expect(stored).toMatchObject({ age: 40 });
    expect(stored).not.toHaveProperty("email");
    expect(stored).not.toHaveProperty("city");
  });
});

describe("PUT / PATCH / DELETE /data/type/{dataTypeName}/{dataId}", () => {
  it("replaces values, renames (moving guards) and keeps the old dataId free afterwards", async () => {
    const { api, record, type } = await setup();
    const original = await create(api, record({ email: "old@acme.test", city: "Bogor" }));
    const replaced = await api.put("/data/type/Customer/Acme%20Corp", {
      dataId: "Acme Renamed",
      segment: "wholesale",
      email: "new@acme.test",
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body.data).toMatchObject({
      _id: original._id,
      dataId: "Acme Renamed",
      segment: "wholesale",
      email: "new@acme.test",
      createdTime: original.createdTime,
    });
    expect(replaced.body.data).not.toHaveProperty("city");
    expect(refusal(await api.get("/data/type/Customer/Acme%20Corp"))).toEqual({ status: 404, failedCode: "sys-404" });
    // Old dataId and old email are free, the new ones are taken.
    await create(api, record({ dataId: "Acme Corp", email: "old@acme.test" }));
    await expectRefused(
      api,
      { method: "POST", path: "/data", body: record({ dataId: "X", email: "new@acme.test" }) },
      { status: 409, failedCode: "data-002" },
    );
    await expectRefused(
      api,
      { method: "POST", path: "/data", body: record({ dataId: "Acme Renamed" }) },
      { status: 409, failedCode: "data-001" },
    );
    // Search follows the rename.
    expect((await listOf(api, `dataTypeId=${type._id}&q=renamed`)).map((item) => item.dataId)).toEqual(["Acme Renamed"]);
    expect(await listOf(api, `dataTypeId=${type._id}&q=bogor`)).toEqual([]);
  });

  it("re-runs every rule on update and changes nothing when one fails", async () => {
    const { api, record } = await setup();
    await create(api, record({ dataId: "A", email: "a@acme.test" }));
    await create(api, record({ dataId: "B", email: "b@acme.test" }));
    const cases: Array<[Record<string, unknown>, string, number]> = [
      [{ age: -1 }, "age", 400],
      [{ segment: null }, "segment", 400],
      [{ color: "red" }, "color", 400],
      [{ dataId: "Bad!" }, "dataId", 400],
      [{ dataTypeName: "Other" }, "dataTypeName", 400],
      [{ email: "a@acme.test" }, "email", 409],
      [{ dataId: "A" }, "dataId", 409],
    ];
    for (const [patch, field, status] of cases) {
      const response = await api.patch("/data/type/Customer/B", patch);
      expect(response.status, JSON.stringify(patch)).toBe(status);
      expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    }
    const stored = (await api.get("/data/type/Customer/B")).body.data;
    expect(stored).toMatchObject({ dataId: "B", email: "b@acme.test", segment: "retail" });
    expect(stored).not.toHaveProperty("age");
  });

  it("patches some values, clears one with null, and moves a record to another hub", async () => {
    const { api, hubB, record } = await setup();
    await create(api, record({ city: "Bogor", age: 5 }));
    const patched = await api.patch("/data/type/Customer/Acme%20Corp", { city: null, age: 6, hubId: hubB });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data).toMatchObject({ age: 6, hubId: hubB, segment: "retail" });
    expect(patched.body.data).not.toHaveProperty("city");
    expect((await api.get(`/data/type/Customer/Acme%20Corp?hubId=${hubB}`)).status).toBe(200);
    await expectRefused(
      api,
      { method: "PATCH", path: "/data/type/Customer/Acme%20Corp", body: {} },
      { status: 400, failedCode: "sys-400", unchanged: "/data/type/Customer/Acme%20Corp" },
    );
  });

  it("deletes a record with its guards, and answers 404 for another organization", async () => {
    const { api, record, type } = await setup();
    await create(api, record({ email: "gone@acme.test" }));
    const stranger = newTenant();
    expect(refusal(await stranger.api.delete("/data/type/Customer/Acme%20Corp"))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await stranger.api.put("/data/type/Customer/Acme%20Corp", { segment: "retail" }))).toEqual({
      status: 404,
      failedCode: "sys-404",
    });
    expect(refusal(await stranger.api.patch("/data/type/Customer/Acme%20Corp", { segment: "retail" }))).toEqual({
      status: 404,
      failedCode: "sys-404",
    });
    const deleted = await api.delete("/data/type/Customer/Acme%20Corp");
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ status: true });
    expect(refusal(await api.get("/data/type/Customer/Acme%20Corp"))).toEqual({ status: 404, failedCode: "sys-404" });
    await expectRefused(api, { method: "DELETE", path: "/data/type/Customer/Acme%20Corp" }, { status: 404, failedCode: "sys-404" });
    await create(api, record({ dataId: "Next", email: "gone@acme.test" }));
    expect(await listOf(api, `dataTypeId=${type._id}&q=corp`)).toEqual([]);
  });
});

describe("Relations", () => {
  it("checks belongsTo/belongsToMany targets and resolves hasMany/hasOne through the target's via field", async () => {
    const { api, hubA } = await setup();
    const company = await createDataType(api, { name: "Company", fields: [{ type: "title", title: "Name" }] });
    const contact = await createDataType(api, {
      name: "Contact",
      fields: [
        { type: "title", title: "Name" },
        {
          id: "company",
          title: "Company",
          type: "relation",
          required: false,
          relation: { kind: "belongsTo", targetKind: "dataType", target: company._id },
        },
        {
          id: "partners",
          title: "Partners",
          type: "relation",
          required: false,
          relation: { kind: "belongsToMany", targetKind: "dataType", target: company._id },
        },
        {
          id: "car",
          title: "Car",
          type: "relation",
          required: false,
          relation: { kind: "belongsTo", targetKind: "standard", target: "vehicle" },
        },
      ],
    });
    const withInverse = await api.patch(`/data-type/${company._id}`, {
      fields: [
        { type: "title", title: "Name" },
        {
          id: "contacts",
          title: "Contacts",
          type: "relation",
          required: false,
          relation: { kind: "hasMany", targetKind: "dataType", target: contact._id, via: "company" },
        },
        {
          id: "firstContact",
          title: "First",
          type: "relation",
          required: false,
          relation: { kind: "hasOne", targetKind: "dataType", target: contact._id, via: "company" },
        },
      ],
    });
    expect(withInverse.status, JSON.stringify(withInverse.body)).toBe(200);
    const acme = await create(api, { dataTypeId: company._id, hubId: hubA, dataId: "Acme" });
    const globex = await create(api, { dataTypeId: company._id, hubId: hubA, dataId: "Globex" });
    const ann = await create(api, {
      dataTypeId: contact._id,
      hubId: hubA,
      dataId: "Ann",
      company: acme._id,
      partners: [globex._id, acme._id],
    });
    const bob = await create(api, { dataTypeId: contact._id, hubId: hubA, dataId: "Bob", company: acme._id });
    expect(ann).toMatchObject({ company: acme._id, partners: [globex._id, acme._id] });

    const acmeRead = (await api.get("/data/type/Company/Acme")).body.data;
    expect([...acmeRead.contacts].sort()).toEqual([ann._id, bob._id].sort());
    expect([ann._id, bob._id]).toContain(acmeRead.firstContact);
    expect((await api.get("/data/type/Company/Globex")).body.data).toMatchObject({ contacts: [], firstContact: null });

    const missingTarget = await api.post("/data", {
      dataTypeId: contact._id,
      hubId: hubA,
      dataId: "Cy",
      company: "ffffffffffffffffffffffff",
    });
    expect(refusal(missingTarget)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(missingTarget.body.errors[0].field).toBe("company");
    const wrongType = await api.post("/data", { dataTypeId: contact._id, hubId: hubA, dataId: "Cy", partners: [ann._id] });
    expect(refusal(wrongType)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(wrongType.body.errors[0].field).toBe("partners");
    const noVehicle = await api.post("/data", { dataTypeId: contact._id, hubId: hubA, dataId: "Cy", car: "ffffffffffffffffffffffff" });
    expect(refusal(noVehicle)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(noVehicle.body.errors[0].field).toBe("car");
    expect(refusal(await api.get("/data/type/Contact/Cy"))).toEqual({ status: 404, failedCode: "sys-404" });
    const van = await api.post("/vehicle", { name: "Van", hubId: hubA });
    expect(van.status, JSON.stringify(van.body)).toBe(201);
    const withVehicle = await api.post("/data", { dataTypeId: contact._id, hubId: hubA, dataId: "Dee", car: van.body.data._id });
    expect(withVehicle.status, JSON.stringify(withVehicle.body)).toBe(201);
    // hasMany values are server-set (resolved on read): a sent value is ignored, never stored.
    const readOnly = await api.post("/data", { dataTypeId: company._id, hubId: hubA, dataId: "Initech", contacts: [ann._id] });
    expect(readOnly.status).toBe(201);
    expect(readOnly.body.data.contacts).toEqual([]);

    // Moving Bob to Globex moves the link.
    expect((await api.patch("/data/type/Contact/Bob", { company: globex._id })).status).toBe(200);
    expect((await api.get("/data/type/Company/Acme")).body.data.contacts).toEqual([ann._id]);
    expect((await api.get("/data/type/Company/Globex")).body.data.contacts).toEqual([bob._id]);
  });
});

describe("GET /data without a data type", () => {
  it("lists the organization's records of every type newest first, paginated, hub-scoped like the typed list, each with its type and its own hidden fields", async () => {
    const { api, organizationId, hubA, hubB, type, record } = await setup();
    const note = await createDataType(api, {
      name: "Note",
      fields: [
        { type: "title", title: "Name" },
        { id: "body", title: "Body", type: "text", required: false },
      ],
      commonData: true,
    });
    await create(api, record({ dataId: "A1", email: "a1@x.test" }));
    await create(api, record({ dataId: "B1", hubId: hubB }));
    await create(api, { dataTypeId: note._id, dataId: "Common", body: "shared" });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // ids order by second: the next record is newer
    await create(api, record({ dataId: "B2", hubId: hubB }));

    const all = await listOf(api, "");
    expect(all.map((item) => item.dataId).sort()).toEqual(["A1", "B1", "B2", "Common"]);
    expect(all[0]?.dataId).toBe("B2");
    const ids = all.map((item) => item._id as string);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(all.find((item) => item.dataId === "Common")).toMatchObject({ dataTypeId: note._id, body: "shared" });
    expect(all.find((item) => item.dataId === "A1")).toMatchObject({ dataTypeId: type._id, email: "a1@x.test" });

    // One cursor pages through all of them.
    const first = await api.get("/data?limit=3");
    expect(first.body.data).toHaveLength(3);
    const second = await api.get(`/data?limit=3&cursor=${first.body.nextCursor}`);
    expect([...first.body.data, ...second.body.data].map((item: { _id: string }) => item._id)).toEqual(ids);
    expect(second.body.nextCursor).toBeNull();

    // Hub scope: hubId, or the token's hubs; common records always qualify.
    expect((await listOf(api, `hubId=${hubA}`)).map((item) => item.dataId).sort()).toEqual(["A1", "Common"]);
    const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubB] }));
    expect((await restricted.get("/data")).body.data.map((item: { dataId: string }) => item.dataId).sort()).toEqual(["B1", "B2", "Common"]);
    expect(refusal(await restricted.get(`/data?hubId=${hubA}`))).toEqual({ status: 400, failedCode: "sys-400" });
    // Hidden fields of the token's view/data entries are left out; naming one in fields is a 403.
    const hiding = apiClient(
      tokenFor({ organizationId, permissionDetails: [{ permissionName: "view/data", dataTypeId: type._id, hiddenFields: ["email"] }] }),
    );
    const seen = (await hiding.get("/data")).body.data as Array<Record<string, unknown>>;
    expect(seen.find((item) => item.dataId === "A1")).not.toHaveProperty("email");
    expect(refusal(await hiding.get("/data?fields=email"))).toEqual({ status: 403, failedCode: "data-403" });
    // fields picks the same fields of every type (each item keeps its type).
    expect((await listOf(api, "fields=dataId&limit=1"))[0]).toEqual({
      _id: ids[0],
      dataId: "B2",
      dataTypeId: type._id,
      data_type: expect.any(Object),
    });
    // Another organization sees none of them.
    expect(await listOf(newTenant().api, "")).toEqual([]);
  });
});

describe("Dangling relations", () => {
  it("a deleted target leaves the pointer as stored; edits of the pointing record pass, only ids a write brings in are checked", async () => {
    const { api, hubA } = await setup();
    const company = await createDataType(api, { name: "Company", fields: [{ type: "title", title: "Name" }] });
    const contact = await createDataType(api, {
      name: "Contact",
      fields: [
        { type: "title", title: "Name" },
        { id: "note", title: "Note", type: "text", required: false },
        {
          id: "company",
          title: "Company",
          type: "relation",
          required: false,
          relation: { kind: "belongsTo", targetKind: "dataType", target: company._id },
        },
        {
          id: "partners",
          title: "Partners",
          type: "relation",
          required: false,
          relation: { kind: "belongsToMany", targetKind: "dataType", target: company._id },
        },
      ],
    });
    const acme = await create(api, { dataTypeId: company._id, hubId: hubA, dataId: "Acme" });
    const globex = await create(api, { dataTypeId: company._id, hubId: hubA, dataId: "Globex" });
    await create(api, { dataTypeId: contact._id, hubId: hubA, dataId: "Ann", company: acme._id, partners: [acme._id, globex._id] });
    expect((await api.delete("/data/type/Company/Acme")).status).toBe(200);

    // The pointer stays and reads as stored.
    expect((await api.get("/data/type/Contact/Ann")).body.data).toMatchObject({ company: acme._id, partners: [acme._id, globex._id] });
    // An edit of another field, a PUT resending the dangling ids, and a PATCH keeping one of them pass.
    const patched = await api.patch("/data/type/Contact/Ann", { note: "still here" });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data).toMatchObject({ note: "still here", company: acme._id });
    const replaced = await api.put("/data/type/Contact/Ann", {
      dataId: "Ann",
      hubId: hubA,
      note: "again",
      company: acme._id,
      partners: [acme._id, globex._id],
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect((await api.patch("/data/type/Contact/Ann", { partners: [acme._id] })).status).toBe(200);
    // Bringing the dangling id into another field, or any unknown id, is still a 400.
    const added = await expectRefused(
      api,
      { method: "PATCH", path: "/data/type/Contact/Ann", body: { partners: [acme._id, "ffffffffffffffffffffffff"] } },
      { status: 400, failedCode: "sys-400", unchanged: "/data/type/Contact/Ann" },
    );
    expect(added.body.errors).toEqual([{ field: "partners", message: expect.stringMatching(/ffffffffffffffffffffffff/) }]);
    // Clearing the pointer, or pointing it at a live record, passes.
    expect((await api.patch("/data/type/Contact/Ann", { company: globex._id })).status).toBe(200);
    // Once replaced, the deleted id is new again for that field.
    await expectRefused(
      api,
      { method: "PATCH", path: "/data/type/Contact/Ann", body: { company: acme._id } },
      { status: 400, failedCode: "sys-400", unchanged: "/data/type/Contact/Ann" },
    );
  });
});

describe("Data type interplay", () => {
  it("blocks deleting a type with records, allows it once they are gone, and then refuses record writes", async () => {
    const { api, hubA } = await setup();
    const temp = await createDataType(api, {
      name: "Temp",
      fields: [
        { type: "title", title: "Name" },
        { id: "note", title: "Note", type: "text", required: false, searchable: true, unique: true },
      ],
    });
    await create(api, { dataTypeId: temp._id, hubId: hubA, dataId: "T1", note: "n" });
    await expectRefused(
      api,
      { method: "DELETE", path: `/data-type/${temp._id}` },
      { status: 409, failedCode: "dt-004", unchanged: `/data-type/${temp._id}` },
    );
    expect((await api.delete("/data/type/Temp/T1")).status).toBe(200);
    expect((await api.delete(`/data-type/${temp._id}`)).status).toBe(200);
    const late = await api.post("/data", { dataTypeId: temp._id, hubId: hubA, dataId: "T2" });
    expect(refusal(late)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(late.body.errors[0].field).toBe("dataTypeId");
  });

  it("refuses record writes while the type is being deleted (fresh delete fence)", async () => {
    const { api, organizationId, hubA, type, record } = await setup();
    await create(api, record({ dataId: "Before" }));
    // A delete in progress has set its fence (the version bump is part of it).
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.dataType(organizationId, type._id),
        UpdateExpression: "SET deletingSince = :now",
        ExpressionAttributeValues: { ":now": Date.now() },
      }),
    );
    const blocked = await api.post("/data", { dataTypeId: type._id, hubId: hubA, dataId: "During", segment: "retail" });
    expect(blocked.status).toBe(409);
    expect(blocked.body.failedCode).toBe("data-003");
    expect(refusal(await api.get("/data/type/Customer/During"))).toEqual({ status: 404, failedCode: "sys-404" });
  });

  it("answers 409 for writes to a type locked by an import, and 400 for extension types", async () => {
    const { api, organizationId, hubA, type, record } = await setup();
    const extension = await createDataType(api, {
      name: "Hub extras",
      extends: { entity: "hub" },
      fields: [{ id: "code", title: "Code", type: "text", required: false }],
    });
    const toExtension = await api.post("/data", { dataTypeId: extension._id, dataId: "X" });
    expect(refusal(toExtension)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(toExtension.body.errors[0].field).toBe("dataTypeId");
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.dataType(organizationId, type._id),
        UpdateExpression: "SET locked = :t",
        ExpressionAttributeValues: { ":t": true },
      }),
    );
    const locked = await api.post("/data", record({ hubId: hubA }));
    expect(locked.status).toBe(409);
    expect(locked.body.failedCode).toBe("data-004");
    expect(await listOf(api, `dataTypeId=${type._id}`)).toEqual([]);
  });
});

describe("DynamoDB limits", () => {
  it.each([
    [1e200, "9007199254740991"],
    [1e-200, "1e-130"],
    [1.2345678901234567e300, "9007199254740991"],
    [-1e126, "9007199254740991"],
    [2 ** 53, "9007199254740991"],
  ])("rejects the number %s, which the store cannot keep, with a 400 naming the field", async (n, fragment) => {
    const { api, hubA } = await setup();
    const measured = await createDataType(api, {
      name: "Measured",
      fields: [
        { type: "title", title: "Name" },
        { id: "n", title: "N", type: "number", required: false },
      ],
    });
    const response = await api.post("/data", { dataTypeId: measured._id, hubId: hubA, dataId: "M1", n });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.errors).toEqual([{ field: "n", message: expect.stringContaining(fragment) }]);
    expect(await listOf(api, `dataTypeId=${measured._id}`)).toEqual([]);
  });

  it("stores numbers at the edges of the storable range", async () => {
    const { api, hubA } = await setup();
    const measured = await createDataType(api, {
      name: "Measured",
      fields: [
        { type: "title", title: "Name" },
        { id: "n", title: "N", type: "number", required: false },
      ],
    });
    for (const [dataId, n] of [
      ["Big", -9007199254740991],
      ["Small", 1e-130],
      ["Precise", 0.1234567890123456],
    ] as const) {
      expect((await create(api, { dataTypeId: measured._id, hubId: hubA, dataId, n })).n).toBe(n);
      expect((await api.get(`/data/type/Measured/${dataId}`)).body.data.n).toBe(n);
    }
  });
});

describe("Deep nesting", () => {
  it("answers 400 naming the body for a multiOption value nested 5,000 arrays deep, storing nothing", async () => {
    const { api, type, record } = await setup();
    const deep = `${"[".repeat(5000)}"a"${"]".repeat(5000)}`;
    for (const method of ["POST", "PUT"] as const) {
      const path = method === "POST" ? "/data" : "/data/type/Customer/Acme Corp";
      const response = await api.request(method, path, {
        rawBody: JSON.stringify(record()).replace('"segment"', `"tags":${deep},"segment"`),
        headers: { "content-type": "application/json" },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.errors).toEqual([{ field: "body", message: expect.stringContaining("32 levels") }]);
    }
    expect(await listOf(api, `dataTypeId=${type._id}`)).toEqual([]);
  });

  it("accepts nesting up to the limit (the value rules then name the field)", async () => {
    const { api, type, record } = await setup();
    const nested = JSON.parse(`${"[".repeat(30)}"a"${"]".repeat(30)}`);
    const response = await api.post("/data", record({ tags: nested }));
    expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(response.body.errors).toEqual([{ field: "tags", message: expect.stringContaining("an array is not one of") }]);
    expect(await listOf(api, `dataTypeId=${type._id}`)).toEqual([]);
  });
});

describe("DynamoDB item size", () => {
  const wide = {
    name: "Wide",
    fields: [
      { type: "title", title: "Name" },
      ...Array.from({ length: 30 }, (_, i) => ({ id: `f${i}`, title: `F${i}`, type: "text", required: false })),
    ],
  };
  /** `count` fields from `from` on, each 10,000 '漢' (30,000 bytes in UTF-8). */
  const filled = (from: number, count: number) =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${from + i}`, "漢".repeat(10_000)]));

  it("rejects a record over DynamoDB's 400 KB item limit with a 400 on body, storing nothing", async () => {
    const { api, hubA } = await setup();
    const type = await createDataType(api, wide);
    const response = await api.post("/data", { dataTypeId: type._id, hubId: hubA, dataId: "Huge", ...filled(0, 30) });
    expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(400);
    expect(response.body.errors).toEqual([{ field: "body", message: expect.stringContaining("400 KB") }]);
    expect(await listOf(api, `dataTypeId=${type._id}`)).toEqual([]);
  });

  it("rejects PUT and PATCH that grow a record past the limit, keeping it unchanged", async () => {
    const { api, hubA } = await setup();
    const type = await createDataType(api, wide);
    const stored = await create(api, { dataTypeId: type._id, hubId: hubA, dataId: "Grows", ...filled(0, 12) });
    const patched = await api.patch("/data/type/Wide/Grows", filled(12, 12));
    expect(patched.status, JSON.stringify(patched.body).slice(0, 300)).toBe(400);
    expect(patched.body.errors).toEqual([{ field: "body", message: expect.stringContaining("400 KB") }]);
    const replaced = await api.put("/data/type/Wide/Grows", filled(0, 25));
    expect(replaced.status, JSON.stringify(replaced.body).slice(0, 300)).toBe(400);
    expect(replaced.body.errors[0].field).toBe("body");
    expect((await api.get("/data/type/Wide/Grows")).body.data).toEqual(stored);
  });
});

describe("Authentication", () => {
  it.each([
    ["POST", "/data"],
    ["GET", "/data?dataTypeName=Customer"],
    ["GET", "/data/X"],
    ["GET", "/data/type/Customer/X"],
    ["PUT", "/data/type/Customer/X"],
    ["PATCH", "/data/type/Customer/X"],
    ["DELETE", "/data/type/Customer/X"],
  ])("%s %s without a token is a 401", async (method, path) => {
    const response = await apiClient(undefined).request(
      method,
      path,
      method === "GET" || method === "DELETE" ? {} : { body: { dataId: "X" } },
    );
    expect(refusal(response)).toEqual({ status: 401, failedCode: "sys-401" });
  });
});
