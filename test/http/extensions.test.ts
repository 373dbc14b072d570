import { describe, expect, it } from "vitest";
import { type ApiClient, apiClient, newOrganizationId, newTenant, tokenFor } from "#test/support/local-api";
import { expectRefused, refusal } from "#test/support/refusals";

/**
 * Entity extensions (docs/api/extensions.md): an extension data type (`extends: { entity }`) adds
 * custom fields to vehicles and hubs (their own routes take and answer `custom`) and to users,
 * roles and flows (`PUT/GET /extension/{entity}/{entityId}`), checked by the record value rules.
 */

async function createType(api: ApiClient, body: Record<string, unknown>) {
  const response = await api.post("/data-type", body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data_type as { _id: string; fields: Array<Record<string, unknown>> };
}

const vehicleExtension = {
  name: "Vehicle extras",
  extends: { entity: "vehicle" },
  fields: [
    { id: "vin", title: "VIN", type: "text", required: true, unique: true },
    { id: "color", title: "Color", type: "option", required: false, optionData: ["red", "blue"], default: "red" },
    { id: "insuredUntil", title: "Insured until", type: "date", required: false },
    { id: "secretCode", title: "Secret code", type: "text", required: false },
  ],
};

async function tenantWithVehicleExtension() {
  const tenant = newTenant();
  const hub = await tenant.api.post("/hub", { name: "Depot", address: "Main street 1", lat: -6.2, lng: 106.8 });
  expect(hub.status).toBe(201);
  const type = await createType(tenant.api, vehicleExtension);
  const vehicle = (name: string, custom?: Record<string, unknown>) => ({
    name,
    hubId: hub.body.data._id as string,
    ...(custom ? { custom } : {}),
  });
  return { ...tenant, hubId: hub.body.data._id as string, type, vehicle };
}

async function vehicleCount(api: ApiClient): Promise<number> {
  const response = await api.get("/vehicles?limit=100");
  expect(response.status).toBe(200);
  return response.body.data.length;
}

describe("Entity extensions: vehicles", () => {
  it("creates a vehicle with custom values (defaults applied, dates as sent) and reads them back", async () => {
    const { api, vehicle } = await tenantWithVehicleExtension();
    const created = await api.post("/vehicle", vehicle("Van 1", { vin: "VIN-001", insuredUntil: "2027-01-31" }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.custom).toEqual({ vin: "VIN-001", color: "red", insuredUntil: "2027-01-31" });
    const read = await api.get(`/vehicle/${created.body.data._id}`);
    expect(read.status).toBe(200);
    expect(read.body.data.custom).toEqual({ vin: "VIN-001", color: "red", insuredUntil: "2027-01-31" });
    const list = await api.get("/vehicles");
    expect(list.body.data[0].custom).toEqual({ vin: "VIN-001", color: "red", insuredUntil: "2027-01-31" });
  });

  it("answers no custom object in an organization without a vehicle extension type, and refuses custom values there", async () => {
    const { api } = newTenant();
    const hub = await api.post("/hub", { name: "Depot", address: "Main street 1", lat: -6.2, lng: 106.8 });
    const plain = await api.post("/vehicle", { name: "Van", hubId: hub.body.data._id });
    expect(plain.status).toBe(201);
    expect(plain.body.data).not.toHaveProperty("custom");
    const refused = await api.post("/vehicle", { name: "Van", hubId: hub.body.data._id, custom: { vin: "X" } });
    expect(refusal(refused)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: "custom" })]);
    expect(await vehicleCount(api)).toBe(1);
  });

  it.each([
    ["a bad value", { vin: "VIN-1", color: "green" }, "custom.color"],
    ["an unknown key", { vin: "VIN-1", wheels: 4 }, "custom.wheels"],
    ["a missing required field", { color: "blue" }, "custom.vin"],
    ["no custom object at all (vin is required)", undefined, "custom.vin"],
    ["a wrong type", { vin: 42 }, "custom.vin"],
    ["a bad date", { vin: "VIN-1", insuredUntil: "31/01/2027" }, "custom.insuredUntil"],
  ])("refuses %s with 400 naming the field and stores nothing", async (_name, custom, field) => {
    const { api, vehicle } = await tenantWithVehicleExtension();
    const response = await api.post("/vehicle", vehicle("Van", custom));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-400" });
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    expect(await vehicleCount(api)).toBe(0);
  });

  it("refuses a unique value another vehicle holds (409 ext-001), and releases it when that vehicle changes or is deleted", async () => {
    const { api, vehicle } = await tenantWithVehicleExtension();
    const first = await api.post("/vehicle", vehicle("Van 1", { vin: "VIN-SAME" }));
    expect(first.status).toBe(201);
    const second = await api.post("/vehicle", vehicle("Van 2", { vin: "VIN-SAME" }));
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ status: false, failedCode: "ext-001", errors: [{ field: "custom.vin" }] });
    expect(await vehicleCount(api)).toBe(1);

    // PATCH the first vehicle's vin: the old value is free again.
    const patched = await api.patch(`/vehicle/${first.body.data._id}`, { custom: { vin: "VIN-OTHER" } });
    expect(patched.status).toBe(200);
    const third = await api.post("/vehicle", vehicle("Van 3", { vin: "VIN-SAME" }));
    expect(third.status).toBe(201);

    // A PATCH onto a held value is refused and changes nothing.
    const clash = await api.patch(`/vehicle/${first.body.data._id}`, { name: "renamed", custom: { vin: "VIN-SAME" } });
    expect(refusal(clash)).toEqual({ status: 409, failedCode: "ext-001" });
    const unchanged = await api.get(`/vehicle/${first.body.data._id}`);
    expect(unchanged.body.data).toMatchObject({ name: "Van 1", custom: { vin: "VIN-OTHER" } });

    // Deleting the vehicle releases its claim.
    expect((await api.delete(`/vehicle/${third.body.data._id}`)).status).toBe(200);
    const fourth = await api.post("/vehicle", vehicle("Van 4", { vin: "VIN-SAME" }));
    expect(fourth.status).toBe(201);
  });

  it("concurrent creates with the same unique value: exactly one wins, the others answer 409 and store nothing", async () => {
    const { api, vehicle } = await tenantWithVehicleExtension();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, index) => api.post("/vehicle", vehicle(`Van ${index}`, { vin: "VIN-RACE" }))),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    expect(await vehicleCount(api)).toBe(1);
  });

  it("PATCH merges custom keys (null clears one); PUT without custom keeps them, PUT with custom replaces them", async () => {
    const { api, vehicle } = await tenantWithVehicleExtension();
    const created = await api.post("/vehicle", vehicle("Van", { vin: "V-1", color: "blue", insuredUntil: "2027-01-31" }));
    const id = created.body.data._id;
    const patched = await api.patch(`/vehicle/${id}`, { custom: { insuredUntil: null } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.custom).toEqual({ vin: "V-1", color: "blue" });
    const keptByPut = await api.put(`/vehicle/${id}`, { name: "Van renamed", hubId: created.body.data.hubId });
    expect(keptByPut.status).toBe(200);
    expect(keptByPut.body.data.custom).toEqual({ vin: "V-1", color: "blue" });
    const replaced = await api.put(`/vehicle/${id}`, { name: "Van renamed", hubId: created.body.data.hubId, custom: { vin: "V-2" } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data.custom).toEqual({ vin: "V-2", color: "red" });
    // Read-modify-write: the body a GET answered can be sent back.
    const read = await api.get(`/vehicle/${id}`);
    const echoed = await api.put(`/vehicle/${id}`, read.body.data);
    expect(echoed.status, JSON.stringify(echoed.body)).toBe(200);
    expect(echoed.body.data.custom).toEqual({ vin: "V-2", color: "red" });
  });

  it("leaves hidden custom fields out for a restricted role, and keeps them when that role PUTs custom without them", async () => {
    const { api, organizationId, type, vehicle } = await tenantWithVehicleExtension();
    const created = await api.post("/vehicle", vehicle("Van", { vin: "V-9", secretCode: "s3cr3t" }));
    const id = created.body.data._id;
    const restricted = apiClient(
      tokenFor({
        organizationId,
        permissionDetails: [{ permissionName: "view/data", dataTypeId: type._id, hiddenFields: ["secretCode"] }],
      }),
    );
    const read = await restricted.get(`/vehicle/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.data.custom).toEqual({ vin: "V-9", color: "red" });
    const list = await restricted.get("/vehicles");
    expect(list.body.data[0].custom).not.toHaveProperty("secretCode");
    const put = await restricted.put(`/vehicle/${id}`, { ...read.body.data, custom: { vin: "V-10" } });
    expect(put.status).toBe(200);
    expect(put.body.data.custom).toEqual({ vin: "V-10", color: "red" });
    expect((await api.get(`/vehicle/${id}`)).body.data.custom).toEqual({ vin: "V-10", color: "red", secretCode: "s3cr3t" });
  });

  it("a changed extension type never corrupts stored values: removed fields are hidden, dropped at the next custom write, and their claims released", async () => {
    const { api, type, vehicle } = await tenantWithVehicleExtension();
    const created = await api.post("/vehicle", vehicle("Van", { vin: "V-1", insuredUntil: "2027-01-31" }));
    const id = created.body.data._id;
    // Remove insuredUntil and vin (the unique field); add a new optional field.
    const withoutFields = vehicleExtension.fields.filter((field) => field.id !== "insuredUntil" && field.id !== "vin");
    const changed = await api.put(`/data-type/${type._id}`, {
      ...vehicleExtension,
      fields: [...withoutFields, { id: "seats", title: "Seats", type: "number", required: false }],
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect((await api.get(`/vehicle/${id}`)).body.data.custom).toEqual({ color: "red" });
    // Re-adding a removed field before the vehicle's next custom write shows the stored value again.
    const readded = await api.put(`/data-type/${type._id}`, {
      ...vehicleExtension,
      fields: [
        ...vehicleExtension.fields.filter((field) => field.id !== "vin"),
        { id: "vin", title: "VIN", type: "text", required: false, unique: true },
      ],
    });
    expect(readded.status).toBe(200);
    expect((await api.get(`/vehicle/${id}`)).body.data.custom).toEqual({ vin: "V-1", color: "red", insuredUntil: "2027-01-31" });
    // Remove them again; the next custom write drops them and frees the vin claim.
    expect((await api.put(`/data-type/${type._id}`, { ...vehicleExtension, fields: withoutFields })).status).toBe(200);
    const written = await api.patch(`/vehicle/${id}`, { custom: { color: "blue" } });
    expect(written.status).toBe(200);
    expect(written.body.data.custom).toEqual({ color: "blue" });
    expect((await api.put(`/data-type/${type._id}`, vehicleExtension)).status).toBe(200);
    expect((await api.get(`/vehicle/${id}`)).body.data.custom).toEqual({ color: "blue" });
    const other = await api.post("/vehicle", vehicle("Van 2", { vin: "V-1" }));
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    // A field that became required is reported at the vehicle's next custom write, not before.
    expect((await api.patch(`/vehicle/${id}`, { name: "renamed" })).status).toBe(200);
    const missing = await expectRefused(
      api,
      { method: "PATCH", path: `/vehicle/${id}`, body: { custom: { color: "red" } } },
      { status: 400, failedCode: "sys-400", unchanged: `/vehicle/${id}` },
    );
    expect(missing.body.errors).toEqual([expect.objectContaining({ field: "custom.vin" })]);
  });

  it("after the extension type is deleted, vehicles answer no custom values and a new extension type starts empty", async () => {
    const { api, type, vehicle } = await tenantWithVehicleExtension();
    const created = await api.post("/vehicle", vehicle("Van", { vin: "V-1" }));
    expect((await api.delete(`/data-type/${type._id}`)).status).toBe(200);
    expect((await api.get(`/vehicle/${created.body.data._id}`)).body.data).not.toHaveProperty("custom");
    await createType(api, {
      ...vehicleExtension,
      name: "Vehicle extras 2",
      fields: [{ id: "vin", title: "VIN", type: "text", required: false, unique: true }],
    });
    expect((await api.get(`/vehicle/${created.body.data._id}`)).body.data.custom).toEqual({});
    expect((await api.post("/vehicle", vehicle("Van 2", { vin: "V-1" }))).status).toBe(201);
  });

  it("another organization's vehicle stays not found, custom values included", async () => {
    const { api, vehicle } = await tenantWithVehicleExtension();
    const created = await api.post("/vehicle", vehicle("Van", { vin: "V-1" }));
    const other = apiClient(tokenFor({ organizationId: newOrganizationId() }));
    expect(refusal(await other.get(`/vehicle/${created.body.data._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await other.patch(`/vehicle/${created.body.data._id}`, { custom: { vin: "V-2" } }))).toEqual({
      status: 404,
      failedCode: "sys-404",
    });
    expect((await api.get(`/vehicle/${created.body.data._id}`)).body.data.custom.vin).toBe("V-1");
  });
});

describe("Entity extensions: hubs", () => {
  it("validates hub custom values, enforces uniqueness across hubs and releases the claim when a hub is deleted", async () => {
    const { api } = newTenant();
    await createType(api, {
      name: "Hub extras",
      extends: { entity: "hub" },
      fields: [
        { id: "siteCode", title: "Site code", type: "text", required: true, unique: true },
        { id: "docks", title: "Docks", type: "number", required: false, validations: { min: 0, max: 50 } },
      ],
    });
    const depot = { name: "Depot", address: "Main street 1", lat: -6.2, lng: 106.8 };
    expect((await api.post("/hub", depot)).body.errors).toEqual([expect.objectContaining({ field: "custom.siteCode" })]);
    expect((await api.post("/hub", { ...depot, custom: { siteCode: "JKT", docks: 51 } })).body.errors).toEqual([
      { field: "custom.docks", message: "custom.docks must be at most 50." },
    ]);
    const first = await api.post("/hub", { ...depot, custom: { siteCode: "JKT", docks: 4 } });
    expect(first.status).toBe(201);
    expect(first.body.data.custom).toEqual({ siteCode: "JKT", docks: 4 });
    const duplicate = await api.post("/hub", { ...depot, custom: { siteCode: "JKT" } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toMatchObject({ failedCode: "ext-001", errors: [{ field: "custom.siteCode" }] });
    const patched = await api.patch(`/hub/${first.body.data._id}`, { custom: { docks: 6 } });
    expect(patched.body.data.custom).toEqual({ siteCode: "JKT", docks: 6 });
    expect((await api.get(`/hub/${first.body.data._id}`)).body.data.custom).toEqual({ siteCode: "JKT", docks: 6 });
    expect((await api.get("/hubs")).body.data.map((hub: { custom: unknown }) => hub.custom)).toEqual([{ siteCode: "JKT", docks: 6 }]);
    expect((await api.delete(`/hub/${first.body.data._id}`)).status).toBe(200);
    expect((await api.post("/hub", { ...depot, custom: { siteCode: "JKT" } })).status).toBe(201);
  });
});

describe("Entity extensions: users, roles and flows (PUT/GET /extension/{entity}/{entityId})", () => {
  it("stores, validates and reads custom values per entity id; uniqueness per entity; tenancy; hidden fields", async () => {
    const { api, organizationId } = newTenant();
    // Without an extension type for the entity: 400 naming entity; reads are 404.
    const early = await api.put("/extension/user/user-1", { custom: { employeeNo: "E-1" } });
    expect(refusal(early)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(early.body.errors).toEqual([expect.objectContaining({ field: "entity" })]);
    expect(refusal(await api.get("/extension/user/user-1"))).toEqual({ status: 404, failedCode: "sys-404" });

    const userType = await createType(api, {
      name: "User extras",
      extends: { entity: "user" },
      fields: [
        { id: "employeeNo", title: "Employee no", type: "text", required: true, unique: true },
        { id: "salary", title: "Salary", type: "number", required: false },
      ],
    });
    await createType(api, {
      name: "Role extras",
      extends: { entity: "role" },
      fields: [{ id: "level", title: "Level", type: "number", required: true }],
    });
    await createType(api, {
      name: "Flow extras",
      extends: { entity: "flow" },
      fields: [{ id: "owner", title: "Owner", type: "text", required: false }],
    });

    const saved = await api.put("/extension/user/user-1", { custom: { employeeNo: "E-1", salary: 1000 } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.data).toMatchObject({
      entity: "user",
      entityId: "user-1",
      dataTypeId: userType._id,
      custom: { employeeNo: "E-1", salary: 1000 },
      organizationId,
    });
    const read = await api.get("/extension/user/user-1");
    expect(read.status).toBe(200);
    expect(read.body.data.custom).toEqual({ employeeNo: "E-1", salary: 1000 });

    // Value rules: 400 naming custom.<field>; nothing stored.
    const bad = await api.put("/extension/user/user-2", { custom: { salary: "lots" } });
    expect(refusal(bad)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(bad.body.errors.map((error: { field: string }) => error.field).sort()).toEqual(["custom.employeeNo", "custom.salary"]);
    expect((await api.put("/extension/user/user-2", { custom: { employeeNo: "E-2", bonus: 1 } })).body.errors).toEqual([
      expect.objectContaining({ field: "custom.bonus" }),
    ]);
    expect(refusal(await api.get("/extension/user/user-2"))).toEqual({ status: 404, failedCode: "sys-404" });

    // Uniqueness across users; released when user-1 changes its value.
    const taken = await api.put("/extension/user/user-2", { custom: { employeeNo: "E-1" } });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ failedCode: "ext-001", errors: [{ field: "custom.employeeNo" }] });
    expect(refusal(await api.get("/extension/user/user-2"))).toEqual({ status: 404, failedCode: "sys-404" });
    expect((await api.put("/extension/user/user-1", { custom: { employeeNo: "E-1b" } })).status).toBe(200);
    expect((await api.put("/extension/user/user-2", { custom: { employeeNo: "E-1" } })).status).toBe(200);

    // Roles and flows have their own types; a role id may equal a user id.
    expect((await api.put("/extension/role/user-1", { custom: {} })).body.errors).toEqual([
      expect.objectContaining({ field: "custom.level" }),
    ]);
    expect((await api.put("/extension/role/user-1", { custom: { level: 3 } })).body.data.custom).toEqual({ level: 3 });
    expect((await api.put("/extension/flow/onboarding", { custom: { owner: "ops" } })).body.data).toMatchObject({
      entity: "flow",
      custom: { owner: "ops" },
    });
    expect((await api.get("/extension/flow/onboarding")).body.data.custom).toEqual({ owner: "ops" });

    // Vehicles and hubs use their own routes.
    expect(refusal(await api.put("/extension/vehicle/abc", { custom: {} }))).toEqual({ status: 400, failedCode: "sys-400" });

    // Hidden fields: left out for a restricted role, kept when it PUTs without them.
    const restricted = apiClient(
      tokenFor({
        organizationId,
        permissionDetails: [{ permissionName: "view/data", dataTypeId: userType._id, hiddenFields: ["salary"] }],
      }),
    );
    expect((await api.put("/extension/user/user-1", { custom: { employeeNo: "E-1b", salary: 2000 } })).status).toBe(200);
    expect((await restricted.get("/extension/user/user-1")).body.data.custom).toEqual({ employeeNo: "E-1b" });
    const restrictedPut = await restricted.put("/extension/user/user-1", (await restricted.get("/extension/user/user-1")).body.data);
    expect(restrictedPut.status, JSON.stringify(restrictedPut.body)).toBe(200);
    expect((await api.get("/extension/user/user-1")).body.data.custom).toEqual({ employeeNo: "E-1b", salary: 2000 });

    // Another organization: not found, and it cannot write through A's type.
    const other = apiClient(tokenFor({ organizationId: newOrganizationId() }));
    expect(refusal(await other.get("/extension/user/user-1"))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await other.put("/extension/user/user-1", { custom: { employeeNo: "X" } }))).toEqual({
      status: 400,
      failedCode: "sys-400",
    });
    expect((await api.get("/extension/user/user-1")).body.data.custom.employeeNo).toBe("E-1b");
  });

  it("requires view/extension to read and edit/extension to write", async () => {
    const organizationId = newOrganizationId();
    const readOnly = apiClient(tokenFor({ organizationId, permissions: ["view/extension"] }));
    const writeOnly = apiClient(tokenFor({ organizationId, permissions: ["edit/extension"] }));
    expect((await readOnly.put("/extension/user/u", { custom: {} })).body).toMatchObject({ status: false, failedCode: "sys-035" });
    expect((await writeOnly.get("/extension/user/u")).body).toMatchObject({ status: false, failedCode: "sys-035" });
  });
});
