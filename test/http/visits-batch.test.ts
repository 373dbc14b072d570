import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";

async function createHub(api: ApiClient, name: string): Promise<string> {
  const response = await api.post("/hub", { name, address: `${name} street 1`, lat: -6.2, lng: 106.8 });
  expect(response.status).toBe(201);
  return response.body.data._id;
}

const stop = (hubId: string, i: number) => ({ hubId, name: `Stop ${i}`, coordinate: `-6.2${i % 10},106.8${i % 10}`, visitTime: 5 });

/** Every visit of the organization, all pages. */
async function allVisits(api: ApiClient): Promise<Array<{ _id: string; name: string; hubId: string }>> {
  const visits = [];
  let cursor: string | null = null;
  do {
    const response = await api.get(`/visits?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    expect(response.status).toBe(200);
    visits.push(...response.body.data);
    cursor = response.body.nextCursor;
  } while (cursor);
  return visits;
}

const postBatch = (api: ApiClient, body: unknown, key?: string) =>
  api.request("POST", "/visits/batch", { body, ...(key ? { headers: { "idempotency-key": key } } : {}) });

describe("POST /visits/batch", () => {
  it("creates 100 visits of two hubs in one call, one 201 result per item in the items' order", async () => {
    // Prepare
    const { api } = newTenant();
    const hubA = await createHub(api, "A");
    const hubB = await createHub(api, "B");
    const items = Array.from({ length: 100 }, (_, i) => stop(i % 2 ? hubB : hubA, i));
    // Act
    const response = await postBatch(api, { visits: items });
    // Assess
    expect(response.status).toBe(200);
    expect(response.body.status).toBe(true);
    expect(response.body.message).toBe("100 of 100 visits have been added.");
    expect(response.body.data.map((result: { index: number; status: number }) => [result.index, result.status])).toEqual(
      items.map((_, i) => [i, 201]),
    );
    expect(response.body.data.map((result: { data: { name: string; hubId: string } }) => [result.data.name, result.data.hubId])).toEqual(
      items.map((item) => [item.name, item.hubId]),
    );
    const stored = await allVisits(api);
    expect(stored.map((visit) => visit._id).sort()).toEqual(
      response.body.data.map((result: { data: { _id: string } }) => result.data._id).sort(),
    );
    const one = response.body.data[7].data;
    expect((await api.get(`/visit/${one._id}`)).body.data).toEqual(one);
  });

  it("creates the 99 valid items and answers the invalid one with the 400 POST /visit gives it", async () => {
    const { api } = newTenant();
    const hub = await createHub(api, "A");
    const items: unknown[] = Array.from({ length: 100 }, (_, i) => stop(hub, i));
    items[42] = { ...stop(hub, 42), coordinate: "95,10", urgency: 1 };
    const single = await api.post("/visit", items[42]);
    const response = await postBatch(api, { visits: items });
    expect(response.status).toBe(200);
    expect(response.body.message).toBe("99 of 100 visits have been added.");
    const failed = response.body.data[42];
    expect(refusal(single)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(failed).toEqual({ index: 42, status: 400, error: single.body });
    expect(failed.error.errors.map((issue: { field: string }) => issue.field).sort()).toEqual(["coordinate.lat", "urgency"]);
    expect(response.body.data.filter((result: { status: number }) => result.status === 201)).toHaveLength(99);
    expect((await allVisits(api)).map((visit) => visit.name).sort()).toEqual(
      items.flatMap((_, i) => (i === 42 ? [] : [`Stop ${i}`])).sort(),
    );
  });

  it("answers an item naming another organization's hub, or one the token does not allow, with POST /visit's 400; the others are created", async () => {
    const owner = newTenant();
    const foreignHub = await createHub(owner.api, "Theirs");
    const { organizationId, api } = newTenant();
    const mine = await createHub(api, "Mine");
    const other = await createHub(api, "Other");
    const response = await postBatch(api, { visits: [stop(mine, 1), stop(foreignHub, 2)] });
    expect(response.status).toBe(200);
    expect(response.body.data.map((result: { status: number }) => result.status)).toEqual([201, 400]);
    expect(response.body.data[1].error).toEqual((await api.post("/visit", stop(foreignHub, 2))).body);
    expect(response.body.data[1].error.errors).toEqual([
      { field: "hubId", message: "hubId must name an existing hub of your organization" },
    ]);
    const restricted = apiClient(tokenFor({ organizationId, hubIds: [mine] }));
    const outside = await postBatch(restricted, { visits: [stop(other, 3)] });
    expect(outside.body.data).toEqual([
      {
        index: 0,
        status: 400,
        error: expect.objectContaining({ errors: [{ field: "hubId", message: "hubId must be one of the hubs your token allows" }] }),
      },
    ]);
    expect((await allVisits(api)).map((visit) => visit.name)).toEqual(["Stop 1"]);
    expect(await allVisits(owner.api)).toEqual([]);
    // The created visit is the caller's organization's: another organization reads 404.
    expect(refusal(await owner.api.get(`/visit/${response.body.data[0].data._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
  });

  it("replays the same results for the same Idempotency-Key and creates nothing more", async () => {
    const { api } = newTenant();
    const hub = await createHub(api, "A");
    const items: unknown[] = Array.from({ length: 30 }, (_, i) => stop(hub, i));
    items[3] = { name: "no hub" };
    const key = randomUUID();
    const first = await postBatch(api, { visits: items }, key);
    const replay = await postBatch(api, { visits: items }, key);
    expect(first.status).toBe(200);
    expect(first.body.data[3]).toMatchObject({ status: 400, error: { status: false, failedCode: "sys-400" } });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect(await allVisits(api)).toHaveLength(29);
    const reused = await postBatch(api, { visits: items.slice(1) }, key);
    expect(reused.status).toBe(422);
    expect(reused.body.failedCode).toBe("idem-422");
    expect(await allVisits(api)).toHaveLength(29);
  });

  it.each([
    ["no body object", []],
    ["no visits", {}],
    ["visits not an array", { visits: { hubId: "x" } }],
    ["an empty batch", { visits: [] }],
    ["more than 100 visits", { visits: Array.from({ length: 101 }, (_, i) => ({ name: `v${i}` })) }],
    ["an unknown key beside visits", { visits: [{ name: "x" }], hubId: "x" }],
  ])("answers 400 for %s and creates nothing", async (_name, body) => {
    const { api } = newTenant();
    const hub = await createHub(api, "A");
    const response = await postBatch(api, body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-400" });
    expect(response.body.errors.length).toBeGreaterThan(0);
    expect(await allVisits(api)).toEqual([]);
    // The tenant and hub are fine: a well-formed batch of the same caller is created.
    expect((await postBatch(api, { visits: [stop(hub, 1)] })).status).toBe(200);
  });

  it("answers 401 without a token and 403 sys-035 without add/visit, creating nothing", async () => {
    const { organizationId, api } = newTenant();
    const hub = await createHub(api, "A");
    const unauthenticated = await postBatch(apiClient(undefined), { visits: [stop(hub, 1)] });
    expect(refusal(unauthenticated)).toEqual({ status: 401, failedCode: "sys-401" });
    const readOnly = apiClient(tokenFor({ organizationId, permissions: ["view/visit"] }));
    const forbidden = await postBatch(readOnly, { visits: [stop(hub, 1)] });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.failedCode).toBe("sys-035");
    expect(await allVisits(api)).toEqual([]);
  });
});
