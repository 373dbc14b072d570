import { describe, expect, it } from "vitest";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";
import { validWeeklySchedule } from "#test/unit/schedules/fixtures";

/**
 * Paging contract: every non-final page is full, and the last page's nextCursor is null even when
 * that page is full (one item is read ahead). A hub-limited token reads its hubs' partitions only,
 * so other hubs' items never produce empty pages in front of its own.
 */
async function created(api: ApiClient, path: string, body: unknown): Promise<{ _id: string }> {
  const response = await api.post(path, body);
  if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.data ?? response.body.data_type;
}

async function inBatches(count: number, make: (i: number) => Promise<unknown>) {
  for (let i = 0; i < count; i += 10) await Promise.all(Array.from({ length: Math.min(10, count - i) }, (_, j) => make(i + j)));
}

/** Every page of a list at `limit`, asserting each non-final page is full. */
async function allPages(api: ApiClient, path: string, limit: number, itemsKey = "data") {
  const pages: Array<Array<{ _id: string }>> = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const response = await api.get(`${path}${separator}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    pages.push(response.body[itemsKey]);
    cursor = response.body.nextCursor;
    if (cursor !== null) expect(response.body[itemsKey], `a page before the last at ${path}`).toHaveLength(limit);
    expect(pages.length).toBeLessThan(100);
  } while (cursor !== null);
  return pages;
}

const hub = (api: ApiClient, name: string) => created(api, "/hub", { name, address: `${name} street 1`, lat: -6.2, lng: 106.8 });

describe("Lists: nextCursor is null on a last page that happens to be full", () => {
  it.each([
    ["/vehicles", (api: ApiClient, hubId: string, i: number) => created(api, "/vehicle", { name: `Van ${i}`, hubId })],
    [
      "/visits",
      (api: ApiClient, hubId: string, i: number) => created(api, "/visit", { name: `Stop ${i}`, hubId, coordinate: "-6.2,106.8" }),
    ],
    [
      "/routing/configurations",
      (api: ApiClient, hubId: string, i: number) => created(api, "/routing/configuration", { name: `Plan ${i}`, hubId }),
    ],
    ["/hubs", (api: ApiClient, _hubId: string, i: number) => hub(api, `Extra ${i}`)],
  ])("GET %s?limit=2 with exactly 2 items", async (path, make) => {
    const { api } = newTenant();
    const hubId = (await hub(api, "Depot"))._id;
    const count = path === "/hubs" ? 1 : 2; // the depot is the first hub
    for (let i = 0; i < count; i++) await make(api, hubId, i);
    const response = await api.get(`${path}?limit=2`);
    expect(response.body.data).toHaveLength(2);
    expect(response.body.nextCursor).toBeNull();
  });

  it("GET /data-types?limit=2 with exactly 2 types, and a full page before the last carries a cursor", async () => {
    const { api } = newTenant();
    for (const name of ["Alpha", "Beta", "Gamma"]) await created(api, "/data-type", { name, fields: [{ type: "title", title: "Name" }] });
    const first = await api.get("/data-types?limit=2");
    expect(first.body.data_types).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await api.get(`/data-types?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.data_types).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
    const exact = newTenant();
    for (const name of ["Alpha", "Beta"]) await created(exact.api, "/data-type", { name, fields: [{ type: "title", title: "Name" }] });
    expect((await exact.api.get("/data-types?limit=2")).body.nextCursor).toBeNull();
  });

  it("GET /routing/schedules across several profiles: full pages, null at the end", async () => {
    const { api } = newTenant();
    const hubId = (await hub(api, "Depot"))._id;
    const profiles = [];
    for (const name of ["P1", "P2", "P3"]) profiles.push(await created(api, "/routing/configuration", { name, hubId }));
    // profile 1: 2 schedules, profile 2: none, profile 3: 1 schedule
    for (const configurationId of [profiles[0]?._id, profiles[0]?._id, profiles[2]?._id]) {
      await created(api, "/routing/schedule", { ...validWeeklySchedule, configurationId });
    }

    const pages = await allPages(api, `/routing/schedules?hubId=${hubId}`, 1);
    expect(pages.flat()).toHaveLength(3);
    expect(pages).toHaveLength(3);
    const byTwo = await allPages(api, `/routing/schedules?hubId=${hubId}`, 3);
    expect(byTwo).toHaveLength(1);
  });
});

describe("Lists of a hub-limited token read only its hubs", () => {
  const others = 40;

  it("vehicles, visits, configuration profiles, routing results and records: the own item is on the first page at limit=1", async () => {
    const { api, organizationId } = newTenant();
    const hubA = (await hub(api, "A"))._id;
    const hubB = (await hub(api, "B"))._id;
    const type = await created(api, "/data-type", { name: "Thing", fields: [{ type: "title", title: "Name" }] });
    // hub B's routing result first: results list newest first
    const profileB = await created(api, "/routing/configuration", { name: "Plan B", hubId: hubB });
    const profileA = await created(api, "/routing/configuration", { name: "Plan A", hubId: hubA });
    // Four on hub A and one on hub B: the organization may have at most 5 runs queued (MAX_ACTIVE_RUNS_PER_ORG).
    await created(api, "/routing/result", { configurationId: profileB._id });
    for (let i = 0; i < 4; i++) await created(api, "/routing/result", { configurationId: profileA._id });
    await inBatches(others, (i) =>
      Promise.all([
        created(api, "/vehicle", { name: `Van A${i}`, hubId: hubA }),
        created(api, "/visit", { name: `Stop A${i}`, hubId: hubA, coordinate: "-6.2,106.8" }),
        created(api, "/routing/configuration", { name: `Plan A${i}`, hubId: hubA }),
        created(api, "/data", { dataTypeId: type._id, hubId: hubA, dataId: `a-${String(i).padStart(3, "0")}` }),
      ]),
    );
    const own = {
      vehicle: await created(api, "/vehicle", { name: "Van B", hubId: hubB }),
      visit: await created(api, "/visit", { name: "Stop B", hubId: hubB, coordinate: "-6.2,106.8" }),
      record: await created(api, "/data", { dataTypeId: type._id, hubId: hubB, dataId: "b-001" }),
    };
    const limited = apiClient(tokenFor({ organizationId, hubIds: [hubB] }));
    for (const [path, expected] of [
      ["/vehicles", [own.vehicle._id]],
      ["/visits", [own.visit._id]],
      ["/routing/configurations", [profileB._id]],
      ["/routing/results", undefined],
      [`/data?dataTypeId=${type._id}`, [own.record._id]],
    ] as const) {
      const response = await limited.get(`${path}${path.includes("?") ? "&" : "?"}limit=1`);
      expect(response.status, path).toBe(200);
      expect(response.body.data, path).toHaveLength(1);
      if (expected)
        expect(
          response.body.data.map((item: { _id: string }) => item._id),
          path,
        ).toEqual(expected);
      else expect(response.body.data[0].hubId, path).toBe(hubB);
      expect(response.body.nextCursor, path).toBeNull();
    }
  });

  it("a token with several hubs pages through each hub in turn: full pages, nothing of another hub, null at the end", async () => {
    const { api, organizationId } = newTenant();
    const [hubA, hubB, hubC, hubD] = (await Promise.all(["A", "B", "C", "D"].map(async (name) => (await hub(api, name))._id))) as [
      string,
      string,
      string,
      string,
    ];
    await inBatches(others, (i) => created(api, "/vehicle", { name: `Van A${i}`, hubId: hubA }));
    const mine = [];
    for (const hubId of [hubB, hubB, hubD, hubD, hubD]) mine.push((await created(api, "/vehicle", { name: "Van", hubId }))._id);
    const limited = apiClient(tokenFor({ organizationId, hubIds: [hubB, hubC, hubD] }));
    for (const limit of [1, 2, 5]) {
      const pages = await allPages(limited, "/vehicles", limit);
      expect(
        pages
          .flat()
          .map((vehicle) => vehicle._id)
          .sort(),
      ).toEqual([...mine].sort());
      expect(pages).toHaveLength(Math.ceil(mine.length / limit));
    }
    // hubs: only the token's own, full pages, even behind many other hubs
    await inBatches(30, (i) => hub(api, `Other ${i}`));
    const hubPages = await allPages(limited, "/hubs", 1);
    expect(
      hubPages
        .flat()
        .map((item) => item._id)
        .sort(),
    ).toEqual([hubB, hubC, hubD].sort());
    expect(hubPages).toHaveLength(3);
    // a token hub id that is only a prefix of a hub id names no hub
    const prefixOnly = apiClient(tokenFor({ organizationId, hubIds: [(hubA as string).slice(0, 4)] }));
    expect((await prefixOnly.get("/hubs")).body.data).toEqual([]);
    // a cursor of this list is refused by an unrestricted list and by another hub set
    const first = await limited.get("/vehicles?limit=1");
    expect(refusal(await api.get(`/vehicles?limit=1&cursor=${first.body.nextCursor}`))).toEqual({ status: 400, failedCode: "sys-400" });
    const otherHubs = apiClient(tokenFor({ organizationId, hubIds: [hubC, hubA] }));
    expect(refusal(await otherHubs.get(`/vehicles?limit=1&cursor=${first.body.nextCursor}`))).toEqual({
      status: 400,
      failedCode: "sys-400",
    });
  });
});
