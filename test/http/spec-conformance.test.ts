import { describe, expect, it } from "vitest";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { schedulingTenant } from "#test/support/scheduling-fixtures";
import { inlineRefs } from "#test/support/openapi-refs";
import { expectRefused, refusal } from "#test/support/refusals";

/**
 * Requests written from the text of the spec (../shared/spec/field-operations-api.md) alone: a
 * client that sends exactly what the spec shows must succeed. Each test quotes the clause it
 * follows. Stored values are checked too: liberal in what is accepted, strict in what is stored.
 */

describe("Spec conformance: routing schedules", () => {
  // "Routing schedule name property: not shown (the name is used only in result naming)."
  it("creates a schedule without a name, named after its configuration profile", async () => {
    const { api, profile } = await schedulingTenant();
    const response = await api.post("/routing/schedule", {
      configurationId: profile,
      periode: "daily",
      schedules: [{ time: ["07:00"] }],
      startTime: "2026-01-01 00:00",
      endTime: "2030-12-31 23:59",
      autoDispatch: false,
    });
    expect(response.status).toBe(201);
    // The profile created by schedulingTenant is "Main hub plan 1".
    expect(response.body.data.name).toBe("Main hub plan 1");
    const read = await api.get(`/routing/schedule/${response.body.data._id}`);
    expect(read.body.data.name).toBe("Main hub plan 1");
  });

  // byDate: "Active window: not used, dates are absolute" — the window is accepted and not stored.
  it("accepts startTime/endTime with byDate and stores them as null", async () => {
    const { api, profile } = await schedulingTenant();
    const response = await api.post("/routing/schedule", {
      configurationId: profile,
      periode: "byDate",
      schedules: [{ date: "2030-12-01", time: ["07:00"] }],
      startTime: "2026-01-01 00:00",
      endTime: "2030-12-31 23:59",
      autoDispatch: true,
    });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({
      startTime: null,
      endTime: null,
      timeSchedules: ["2030-12-01 07:00"],
      nextRunTime: "2030-12-01 07:00",
    });
    const read = await api.get(`/routing/schedule/${response.body.data._id}`);
    expect(read.body.data).toMatchObject({ startTime: null, endTime: null });
  });

  // "frequency — Used with periode = custom", "interval — Used with periode = custom": a form that
  // always sends them with another periode is accepted; they are not stored.
  it("accepts frequency/interval with a periode other than custom and stores them as null", async () => {
    const { api, profile } = await schedulingTenant();
    const response = await api.post("/routing/schedule", {
      name: "Weekly",
      configurationId: profile,
      periode: "weekly",
      schedules: [{ day: "monday", time: ["07:00"] }],
      startTime: "2026-01-01 00:00",
      endTime: "2030-12-31 23:59",
      frequency: "weekly",
      interval: 1,
      autoDispatch: false,
    });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ periode: "weekly", frequency: null, interval: null });
    const patched = await api.patch(`/routing/schedule/${response.body.data._id}`, {
      periode: "daily",
      schedules: [{ time: ["08:00"] }],
      interval: 1,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ periode: "daily", frequency: null, interval: null });
  });
});

describe("Spec conformance: data types", () => {
  // extends rule 3: "It forces commonData to true."
  it("coerces commonData false to true on an extension data type", async () => {
    const { api } = newTenant();
    const response = await api.post("/data-type", {
      name: "Vehicle extras",
      fields: [{ id: "colour", title: "Colour", type: "text", required: false }],
      commonData: false,
      extends: { entity: "vehicle" },
    });
    expect(response.status).toBe(201);
    expect(response.body.data_type).toMatchObject({ commonData: true, extends: { entity: "vehicle" } });
    const id = response.body.data_type._id;
    const replaced = await api.put(`/data-type/${id}`, {
      name: "Vehicle extras",
      fields: [{ id: "colour", title: "Colour", type: "text", required: false }],
      commonData: false,
      extends: { entity: "vehicle" },
    });
    expect(replaced.status).toBe(200);
    expect((await api.get(`/data-type/${id}`)).body.data_type.commonData).toBe(true);
  });

  // relation "via — Required when kind is hasOne or hasMany"; the other optional attributes accept null.
  it("accepts null for relation.via and for every optional attribute, storing them as absent", async () => {
    const { api } = newTenant();
    const response = await api.post("/data-type", {
      name: "Ticket",
      fields: [
        { id: "dataId", title: "Code", type: "title", required: true, primaryKey: null, description: null },
        {
          id: "owner",
          title: "Owner",
          type: "relation",
          required: false,
          relation: { kind: "belongsTo", targetKind: "standard", target: "user", via: null },
        },
        {
          id: "note",
          title: "Note",
          type: "text",
          required: false,
          default: null,
          optionData: null,
          unique: null,
          searchable: null,
          validations: null,
          relation: null,
          format: null,
        },
        { id: "due", title: "Due", type: "date", required: false, validations: { min: "2026-01-01", max: null, minInclusive: null } },
      ],
      limitUser: null,
      commonData: null,
      uniqueTogether: null,
      extends: null,
      provider: null,
      providerConfig: null,
    });
    expect(response.status).toBe(201);
    const dataType = response.body.data_type;
    expect(dataType).toMatchObject({
      limitUser: false,
      commonData: false,
      uniqueTogether: [],
      extends: null,
      provider: "internal",
      providerConfig: null,
    });
    expect(dataType.fields[1].relation).toEqual({ kind: "belongsTo", targetKind: "standard", target: "user" });
    expect(dataType.fields[2]).toMatchObject({ unique: false, searchable: false, optionData: [] });
    expect(dataType.fields[2]).not.toHaveProperty("validations");
    expect(dataType.fields[3].validations).toEqual({ min: "2026-01-01" });
  });

  it("still names a null required attribute in the 400", async () => {
    const { api } = newTenant();
    const response = await api.post("/data-type", { name: null, fields: [{ type: "title", title: "Name" }] });
    expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain("name");
    expect((await api.get("/data-types")).body.data_types).toEqual([]);
  });
});

describe("Spec conformance: read-modify-write (server-set keys in a body are ignored)", () => {
  const forged = {
    _id: "ffffffffffffffffffffffff",
    organizationId: "another-org",
    createdBy: "someone-else",
    createdTime: "2000-01-01 00:00:00",
    updatedTime: "2000-01-01 00:00:00",
  };
  const serverSet = ["_id", "organizationId", "createdBy", "createdTime"] as const;

  /**
   * GET the resource, send the exact body back (200), then send it with forged server-set values
   * (200): the server-set values read back are the original ones.
   */
  async function roundTrip(
    api: ApiClient,
    path: string,
    key: string,
    method: "PUT" | "PATCH" = "PUT",
    extraForged: Record<string, unknown> = {},
  ) {
    const read = (await api.get(path)).body[key] as Record<string, unknown>;
    expect(read).toBeTruthy();
    const same = await api.request(method, path, { body: read });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    const forgedBody = { ...read, ...Object.fromEntries(Object.entries(forged).filter(([name]) => name in read)), ...extraForged };
    const tampered = await api.request(method, path, { body: forgedBody });
    expect(tampered.status, JSON.stringify(tampered.body)).toBe(200);
    const after = (await api.get(path)).body[key] as Record<string, unknown>;
    for (const name of serverSet) if (name in read) expect(after[name]).toEqual(read[name]);
    if ("updatedTime" in read) expect(after.updatedTime).not.toBe(forged.updatedTime);
    return { read, after };
  }

  it("data types: PUT of the body read by GET, with _id, locked, createdBy, organizationId and times", async () => {
    const { api } = newTenant();
    const created = await api.post("/data-type", {
      name: "Customer",
      fields: [
        { type: "title", title: "Name" },
        { id: "phone", title: "Phone", type: "phoneNumber", required: false },
      ],
    });
    const { after } = await roundTrip(api, `/data-type/${created.body.data_type._id}`, "data_type", "PUT", { locked: true });
    expect(after.locked).toBe(false);
    // Any other unknown key is still a 400 naming it.
    const unknown = await expectRefused(
      api,
      { method: "PUT", path: `/data-type/${created.body.data_type._id}`, body: { ...after, colour: "red" } },
      { status: 400, failedCode: "sys-400", unchanged: `/data-type/${created.body.data_type._id}` },
    );
    expect(unknown.body.errors.map((error: { field: string }) => error.field)).toContain("colour");
  });

  it("vehicles, hubs, configuration profiles and schedules: PUT of the body read by GET", async () => {
    const { api, hubId, profile } = await schedulingTenant();
    const vehicle = await api.post("/vehicle", { name: "Van 1", hubId });
    expect(vehicle.status).toBe(201);
    await roundTrip(api, `/vehicle/${vehicle.body.data._id}`, "data");
    await roundTrip(api, `/hub/${hubId}`, "data");
    await roundTrip(api, `/routing/configuration/${profile}`, "data");
    const schedule = await api.post("/routing/schedule", {
      configurationId: profile,
      periode: "weekly",
      schedules: [{ day: "monday", time: ["07:00"] }],
      startTime: "2026-01-01 00:00",
      endTime: "2030-12-31 23:59",
      autoDispatch: false,
    });
    await roundTrip(api, `/routing/schedule/${schedule.body.data._id}`, "data", "PUT", {
      timeSchedules: ["sunday 01:00"],
      nextRunTime: "2020-01-01 00:00",
    });
    const unknown = await expectRefused(
      api,
      { method: "PUT", path: `/vehicle/${vehicle.body.data._id}`, body: { ...vehicle.body.data, colour: "red" } },
      { status: 400, failedCode: "sys-400", unchanged: `/vehicle/${vehicle.body.data._id}` },
    );
    expect(unknown.body.errors.map((error: { field: string }) => error.field)).toContain("colour");
  });

  it("visits: PATCH of the body read by GET, dispatch fields included", async () => {
    const { api, hubId } = await schedulingTenant();
    const visit = await api.post("/visit", { hubId, name: "Shop", coordinate: { lat: -6.2, lng: 106.8 } });
    expect(visit.status).toBe(201);
    const { after } = await roundTrip(api, `/visit/${visit.body.data._id}`, "data", "PATCH", {
      assignedVehicleId: "ffffffffffffffffffffffff",
      eta: "2026-12-01 09:00",
    });
    expect(after).toMatchObject({ assignedVehicleId: null, eta: null, status: "UNASSIGNED" });
  });

  it("records: PUT of the body read by GET, with data_type and resolved hasMany values", async () => {
    const { api, hubId } = await schedulingTenant();
    const company = await api.post("/data-type", { name: "Company", fields: [{ type: "title", title: "Name" }] });
    const contact = await api.post("/data-type", {
      name: "Contact",
      fields: [
        { type: "title", title: "Name" },
        {
          id: "company",
          title: "Company",
          type: "relation",
          required: false,
          relation: { kind: "belongsTo", targetKind: "dataType", target: company.body.data_type._id },
        },
      ],
    });
    const companyFields = [
      { type: "title", title: "Name" },
      {
        id: "contacts",
        title: "Contacts",
        type: "relation",
        required: false,
        relation: { kind: "hasMany", targetKind: "dataType", target: contact.body.data_type._id, via: "company" },
      },
    ];
    expect((await api.put(`/data-type/${company.body.data_type._id}`, { name: "Company", fields: companyFields })).status).toBe(200);
    const acme = await api.post("/data", { dataTypeId: company.body.data_type._id, hubId, dataId: "Acme" });
    expect(acme.status).toBe(201);
    const ann = await api.post("/data", { dataTypeId: contact.body.data_type._id, hubId, dataId: "Ann", company: acme.body.data._id });
    expect(ann.status).toBe(201);
    const { after } = await roundTrip(api, "/data/type/Company/Acme", "data", "PUT", { contacts: [], data_type: { _id: "x", name: "y" } });
    expect(after).toMatchObject({ contacts: [ann.body.data._id], data_type: { _id: company.body.data_type._id, name: "Company" } });
    await roundTrip(api, "/data/type/Contact/Ann", "data", "PATCH");
  });
});

describe("Spec conformance: dateTime values", () => {
  // "Field types a record can hold: … a date, time or date-time range"; validations min/max apply to dateTime.
  it("accepts the same dateTime texts in records as in validation bounds and stores one form (Y-m-d H:i:s, UTC)", async () => {
    const { api } = newTenant();
    const created = await api.post("/data-type", {
      name: "Booking",
      commonData: true,
      fields: [
        { id: "dataId", title: "Code", type: "title", required: true },
        { id: "slot", title: "Slot", type: "dateTime", inputType: "range", required: false, validations: { min: "2026-01-01 00:00" } },
        { id: "at", title: "At", type: "dateTime", format: "date-time", required: false, validations: { max: "2030-01-01T00:00:00" } },
      ],
    });
    expect(created.status).toBe(201);
    expect(created.body.data_type.fields[1].validations).toEqual({ min: "2026-01-01 00:00:00" });
    const record = await api.post("/data", {
      dataTypeId: created.body.data_type._id,
      dataId: "B-1",
      slot: { from: "2026-12-01 08:00:00", to: "2026-12-01T10:00:00Z" },
      at: "2026-12-01 08:00",
    });
    expect(record.status, JSON.stringify(record.body)).toBe(201);
    const read = await api.get("/data/type/Booking/B-1");
    expect(read.body.data).toMatchObject({ slot: { from: "2026-12-01 08:00:00", to: "2026-12-01 10:00:00" }, at: "2026-12-01 08:00:00" });
    const withOffset = await api.patch("/data/type/Booking/B-1", { at: "2026-12-01T15:00:00+07:00" });
    expect(withOffset.status).toBe(200);
    expect(withOffset.body.data.at).toBe("2026-12-01 08:00:00");
    const tooEarly = await expectRefused(
      api,
      { method: "PATCH", path: "/data/type/Booking/B-1", body: { slot: { from: "2025-12-31T23:59", to: "2026-01-02 00:00" } } },
      { status: 400, failedCode: "sys-400", unchanged: "/data/type/Booking/B-1" },
    );
    expect(tooEarly.body.errors.map((error: { field: string }) => error.field)).toContain("slot");
  });
});

describe("Spec conformance: search without a data type", () => {
  // "GET /data — Query parameter q searches the searchable fields. Query parameter fields selects fields."
  it("GET /data?q=…&fields=… searches every data type of the organization, hub scope and hidden fields applied", async () => {
    const { api, organizationId, hubId } = await schedulingTenant();
    const customer = await api.post("/data-type", {
      name: "Customer",
      fields: [
        { type: "title", title: "Name" },
        { id: "city", title: "City", type: "text", required: false, searchable: true },
        { id: "secret", title: "Secret", type: "text", required: false, searchable: true },
      ],
    });
    const product = await api.post("/data-type", { name: "Product", commonData: true, fields: [{ type: "title", title: "Name" }] });
    expect(
      (await api.post("/data", { dataTypeId: customer.body.data_type._id, hubId, dataId: "Bandung Motors", city: "Jakarta" })).status,
    ).toBe(201);
    expect(
      (await api.post("/data", { dataTypeId: customer.body.data_type._id, hubId, dataId: "Quiet One", secret: "bandung" })).status,
    ).toBe(201);
    expect((await api.post("/data", { dataTypeId: product.body.data_type._id, dataId: "Bandung Batik" })).status).toBe(201);
    expect((await api.post("/data", { dataTypeId: product.body.data_type._id, dataId: "Surabaya Batik" })).status).toBe(201);

    const found = await api.get("/data?q=band");
    expect(found.status).toBe(200);
    expect(found.body.data.map((item: { dataId: string }) => item.dataId).sort()).toEqual(["Bandung Batik", "Bandung Motors", "Quiet One"]);
    for (const item of found.body.data)
      expect(item.data_type.name).toBe(item.dataTypeId === product.body.data_type._id ? "Product" : "Customer");
    expect(found.body.nextCursor).toBeNull();

    const projected = await api.get("/data?q=bandung%20jak&fields=city");
    expect(projected.body.data).toEqual([
      {
        _id: expect.any(String),
        dataId: "Bandung Motors",
        dataTypeId: customer.body.data_type._id,
        data_type: { _id: customer.body.data_type._id, name: "Customer" },
        city: "Jakarta",
      },
    ]);

    // A field hidden from the caller neither matches nor shows; naming it in fields is a 403.
    const hiding = apiClient(
      tokenFor({
        organizationId,
        permissionDetails: [{ permissionName: "view/data", dataTypeId: customer.body.data_type._id, hiddenFields: ["secret"] }],
      }),
    );
    const hidden = await hiding.get("/data?q=bandung");
    expect(hidden.body.data.map((item: { dataId: string }) => item.dataId).sort()).toEqual(["Bandung Batik", "Bandung Motors"]);
    expect(refusal(await hiding.get("/data?q=bandung&fields=secret"))).toEqual({ status: 403, failedCode: "data-403" });

    // Another hub's token sees the common product only.
    const otherHub = apiClient(tokenFor({ organizationId, hubIds: ["0123456789abcdef01234567"] }));
    expect((await otherHub.get("/data?q=bandung")).body.data.map((item: { dataId: string }) => item.dataId)).toEqual(["Bandung Batik"]);

    // One cursor pages through the results of every type.
    const first = await api.get("/data?q=ba&limit=2");
    expect(first.body.data).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const rest = await api.get(`/data?q=ba&limit=10&cursor=${first.body.nextCursor}`);
    expect(rest.status).toBe(200);
    const all = [...first.body.data, ...rest.body.data].map((item: { dataId: string }) => item.dataId);
    expect(all.sort()).toEqual(["Bandung Batik", "Bandung Motors", "Quiet One", "Surabaya Batik"]);

    // Without q: every record of the organization, newest first.
    expect((await api.get("/data")).status).toBe(200);
  });
});

describe("Spec conformance: the machine description", () => {
  it("lists the server-set keys of every write body as readOnly properties", async () => {
    const document = (await apiClient(undefined).get("/openapi.json")).body;
    const bodyOf = (path: string, method: string) =>
      inlineRefs(document, document.paths[path][method].requestBody.content["application/json"].schema);
    for (const [path, method] of [
      ["/vehicle/{vehicleId}", "put"],
      ["/hub/{hubId}", "put"],
      ["/visit/{visitId}", "patch"],
      ["/routing/configuration/{configurationId}", "put"],
      ["/routing/schedule/{scheduleId}", "put"],
      ["/data-type/{dataTypeId}", "put"],
      ["/data/type/{dataTypeName}/{dataId}", "put"],
    ] as const) {
      const schema = bodyOf(path, method);
      for (const key of ["_id", "organizationId", "createdTime", "updatedTime"])
        expect(schema.properties[key], `${method} ${path} ${key}`).toMatchObject({ readOnly: true });
      expect(schema).not.toHaveProperty("x-server-set-keys");
    }
    expect(bodyOf("/data-type/{dataTypeId}", "put").properties.locked).toMatchObject({ readOnly: true });
  });
});
