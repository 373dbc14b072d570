import { describe, expect, it } from "vitest";
import type { Caller } from "#shared/domain/caller";
import { NotFoundError, ValidationError } from "#shared/domain/errors";
import { scheduleInputSchema, schedulePatchSchema, type ScheduleRecord } from "#shared/domain/schedules/schema";
import {
  createScheduleService,
  type HubConfigurations,
  type ScheduleListFilter,
  type ScheduleStore,
} from "#shared/domain/schedules/service";
import { scheduleBody } from "./fixtures.ts";

/** In-memory port: enough to observe what the service writes. */
function memoryStore() {
  const items = new Map<string, { schedule: ScheduleRecord; version: number }>();
  const listCalls: ScheduleListFilter[] = [];
  const key = (o: string, id: string) => `${o}/${id}`;
  const store: ScheduleStore = {
    async insert(schedule) {
      items.set(key(schedule.organizationId, schedule._id), { schedule, version: 1 });
    },
    async find(o, id) {
      return items.get(key(o, id));
    },
    async replace(schedule, previous) {
      const current = items.get(key(schedule.organizationId, schedule._id));
      if (!current || current.version !== previous.version) throw new Error("version mismatch");
      items.set(key(schedule.organizationId, schedule._id), { schedule, version: previous.version + 1 });
    },
    async remove(o, id) {
      return items.delete(key(o, id));
    },
    async list(o, filter) {
      listCalls.push(filter);
      const all = [...items.values()].map((item) => item.schedule).filter((s) => s.organizationId === o);
      const matching = filter.configurationIds ? all.filter((s) => filter.configurationIds?.includes(s.configurationId)) : all;
      return { items: matching.slice(0, filter.limit), nextCursor: null };
    },
  };
  return { store, items, listCalls };
}

/** An organization whose hubs have no configuration profiles. */
const noHubConfigurations: HubConfigurations = { configurationIdsOfHub: async () => [] };

const caller = (overrides: Partial<Caller> = {}): Caller => ({
  userId: "user-7",
  organizationId: "org-a",
  hubIds: [],
  permissions: new Set(),
  permissionDetails: [],
  ...overrides,
});

function setup(
  options: {
    timeZone?: string;
    now?: string;
    hubConfigurations?: HubConfigurations;
    configurationHub?: (o: string, id: string) => Promise<string | undefined>;
    configurationName?: (o: string, id: string) => Promise<string | undefined>;
  } = {},
) {
  const memory = memoryStore();
  let clock = new Date(options.now ?? "2026-05-13T10:00:00Z"); // a Wednesday
  const service = createScheduleService({
    store: memory.store,
    hubConfigurations: options.hubConfigurations ?? noHubConfigurations,
    timeZone: () => options.timeZone ?? "UTC",
    now: () => clock,
    ...(options.configurationHub ? { configurationHub: options.configurationHub } : {}),
    ...(options.configurationName ? { configurationName: options.configurationName } : {}),
  });
  return { ...memory, service, setNow: (iso: string) => (clock = new Date(iso)) };
}

const input = (overrides: Record<string, unknown> = {}) => scheduleInputSchema.parse(scheduleBody(overrides));

describe("Service: routing schedules", () => {
  describe("Method: create", () => {
    it("names a schedule sent without a name after its configuration profile", async () => {
      // Prepare
      const { service } = setup({
        configurationName: async (o, id) => (o === "org-a" && id === "conf-1" ? "North depot plan" : undefined),
      });
      // Act
      const named = await service.create(caller(), input({ name: undefined }));
      const unknownProfile = await service.create(caller(), input({ name: null, configurationId: "conf-9" }));
      const sent = await service.create(caller(), input({ name: "Morning" }));
      // Assess
      expect(named.name).toBe("North depot plan");
      expect(unknownProfile.name).toBe("Routing schedule");
      expect(sent.name).toBe("Morning");
    });

    it("derives timeSchedules and the next run, stores the next run instant, records the creator", async () => {
      // Prepare
      const { service, items } = setup({ timeZone: "Asia/Jakarta" });
      // Act
      const created = await service.create(caller(), input());
      // Assess
      expect(created.timeSchedules).toEqual(["monday 07:00", "monday 13:00", "friday 07:00"]);
      expect(created.nextRunTime).toBe("2026-05-15 07:00"); // Friday 07:00 WIB
      expect(created.timeZone).toBe("Asia/Jakarta"); // the zone nextRunTime is read in, answered with it
      expect(created).toMatchObject({ createdBy: "user-7", organizationId: "org-a", active: true, createdTime: "2026-05-13 10:00:00" });
      expect(created).not.toHaveProperty("logExecuted");
      expect(created).not.toHaveProperty("nextRunAt");
      const stored = items.get(`org-a/${created._id}`)?.schedule;
      expect(stored?.nextRunAt).toBe("2026-05-15T00:00:00.000Z");
      expect(stored).not.toHaveProperty("nextRunTime");
      expect(stored).not.toHaveProperty("timeZone");
    });

    it("formats nextRunTime in the application time zone across a DST change", async () => {
      const { service } = setup({ timeZone: "America/New_York", now: "2026-03-07T12:00:00Z" });
      const created = await service.create(caller(), input({ periode: "daily", schedules: [{ time: ["02:30"] }] }));
      expect(created.nextRunTime).toBe("2026-03-08 03:00");
    });

    it("a paused schedule has no next run", async () => {
      const { service, items } = setup();
      const created = await service.create(caller(), input({ active: false }));
      expect(created.nextRunTime).toBeNull();
      expect(items.get(`org-a/${created._id}`)?.schedule.nextRunAt).toBeNull();
    });

    it("a byDate schedule whose dates are past has no next run", async () => {
      const { service } = setup();
      const created = await service.create(
        caller(),
        input({ periode: "byDate", startTime: undefined, endTime: undefined, schedules: [{ date: "2026-05-01", time: ["07:00"] }] }),
      );
      expect(created.nextRunTime).toBeNull();
      expect(created.timeSchedules).toEqual(["2026-05-01 07:00"]);
    });
  });

  describe("Method: replace / patch", () => {
    it("recomputes the next run from the time of the write and keeps logExecuted and the audit fields", async () => {
      const { service, items, setNow } = setup();
      const created = await service.create(caller(), input());
      const stored = items.get(`org-a/${created._id}`);
      if (!stored) throw new Error("not stored");
      stored.schedule.logExecuted = {
        status: "SUCCESS",
        message: "done",
        routingResultId: "r1",
        dispatched: null,
        lastExecute: "2026-05-01 07:00:00",
      };
      setNow("2026-05-15T08:00:00Z");
      const replaced = await service.replace(
        caller({ userId: "user-9" }),
        created._id,
        input({ schedules: [{ day: "sunday", time: ["06:00"] }] }),
      );
      expect(replaced).toMatchObject({
        createdBy: "user-7",
        createdTime: created.createdTime,
        updatedTime: "2026-05-15 08:00:00",
        logExecuted: { status: "SUCCESS", routingResultId: "r1" },
        nextRunTime: "2026-05-17 06:00",
        timeSchedules: ["sunday 06:00"],
      });
    });

    it("patch merges over the stored schedule and pauses it", async () => {
      const { service, items } = setup();
      const created = await service.create(caller(), input());
      const paused = await service.patch(caller(), created._id, schedulePatchSchema.parse({ active: false }));
      expect(paused).toMatchObject({ active: false, nextRunTime: null, name: created.name, timeSchedules: created.timeSchedules });
      expect(items.get(`org-a/${created._id}`)?.schedule.nextRunAt).toBeNull();
      const resumed = await service.patch(caller(), created._id, schedulePatchSchema.parse({ active: true }));
      expect(resumed.nextRunTime).toBe(created.nextRunTime);
    });

    it("patch validates the merged schedule and changes nothing when it is invalid", async () => {
      const { service, items } = setup();
      const created = await service.create(caller(), input());
      const before = structuredClone(items.get(`org-a/${created._id}`));
      // weekly entries carry `day`, which a daily schedule does not use
      const attempt = service.patch(caller(), created._id, schedulePatchSchema.parse({ periode: "daily" }));
      await expect(attempt).rejects.toBeInstanceOf(ValidationError);
      await expect(attempt).rejects.toMatchObject({
        errors: expect.arrayContaining([expect.objectContaining({ field: "schedules.0.day" })]),
      });
      expect(items.get(`org-a/${created._id}`)).toEqual(before);
    });

    it("patch to custom needs frequency and interval, and clearing them leaves custom", async () => {
      const { service } = setup();
      const created = await service.create(caller(), input());
      const custom = await service.patch(
        caller(),
        created._id,
        schedulePatchSchema.parse({ periode: "custom", frequency: "weekly", interval: 2 }),
      );
      expect(custom).toMatchObject({ periode: "custom", frequency: "weekly", interval: 2 });
      const back = await service.patch(
        caller(),
        created._id,
        schedulePatchSchema.parse({ periode: "weekly", frequency: null, interval: null }),
      );
      expect(back).toMatchObject({ periode: "weekly", frequency: null, interval: null });
    });
  });

  describe("Method: get / remove", () => {
    it("another organization's schedule is not found", async () => {
      const { service } = setup();
      const created = await service.create(caller(), input());
      const other = caller({ organizationId: "org-b" });
      await expect(service.get(other, created._id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(service.remove(other, created._id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(service.get(caller(), created._id)).resolves.toMatchObject({ _id: created._id });
    });
  });

  describe("Method: list", () => {
    it("without filters lists the organization; configurationId narrows to that profile", async () => {
      const { service, listCalls } = setup();
      await service.create(caller(), input({ configurationId: "conf-1" }));
      await service.create(caller(), input({ configurationId: "conf-2" }));
      expect((await service.list(caller(), { limit: 20 })).items).toHaveLength(2);
      const filtered = await service.list(caller(), { limit: 20, configurationId: "conf-2" });
      expect(filtered.items.map((s) => s.configurationId)).toEqual(["conf-2"]);
      expect(listCalls.at(-1)?.configurationIds).toEqual(["conf-2"]);
    });

    it("hubId resolves through the hub's configuration profiles", async () => {
      const hubConfigurations: HubConfigurations = {
        configurationIdsOfHub: async (o, hubId) => (o === "org-a" && hubId === "hub-1" ? ["conf-1", "conf-3"] : []),
      };
      const { service, listCalls } = setup({ hubConfigurations });
      await service.create(caller(), input({ configurationId: "conf-1" }));
      await service.create(caller(), input({ configurationId: "conf-2" }));
      const ofHub = await service.list(caller(), { limit: 20, hubId: "hub-1" });
      expect(ofHub.items.map((s) => s.configurationId)).toEqual(["conf-1"]);
      expect(listCalls.at(-1)?.configurationIds).toEqual(["conf-1", "conf-3"]);
      // both filters: the intersection
      const both = await service.list(caller(), { limit: 20, hubId: "hub-1", configurationId: "conf-2" });
      expect(both.items).toEqual([]);
    });

    it("a hub without profiles matches nothing and reads nothing", async () => {
      const { service, listCalls } = setup();
      await service.create(caller(), input());
      expect(await service.list(caller(), { limit: 20, hubId: "hub-1" })).toEqual({ items: [], nextCursor: null });
      expect(listCalls).toHaveLength(0);
    });

    it("rejects a hubId the token does not allow", async () => {
      const { service } = setup();
      await expect(service.list(caller({ hubIds: ["hub-2"] }), { limit: 20, hubId: "hub-1" })).rejects.toMatchObject({
        errors: [{ field: "hubId", message: expect.any(String) }],
      });
    });
  });
  describe("hub-restricted tokens", () => {
    // conf-1 plans hub-1, conf-2 plans hub-2; conf-gone was deleted.
    const hubOf: Record<string, string> = { "conf-1": "hub-1", "conf-2": "hub-2" };
    const profilesOf: Record<string, string[]> = { "hub-1": ["conf-1"], "hub-2": ["conf-2"] };
    const restrictedSetup = () =>
      setup({
        configurationHub: async (o, id) => (o === "org-a" ? hubOf[id] : undefined),
        hubConfigurations: { configurationIdsOfHub: async (o, hubId) => (o === "org-a" ? (profilesOf[hubId] ?? []) : []) },
      });
    const hub1Caller = caller({ hubIds: ["hub-1"] });

    it("create and update need a profile of an allowed hub (400 on configurationId) and store nothing", async () => {
      const { service, items } = restrictedSetup();
      await expect(service.create(hub1Caller, input({ configurationId: "conf-2" }))).rejects.toMatchObject({
        errors: [{ field: "configurationId", message: expect.stringContaining("hub your token allows") }],
      });
      await expect(service.create(hub1Caller, input({ configurationId: "conf-gone" }))).rejects.toBeInstanceOf(ValidationError);
      expect(items.size).toBe(0);
      const own = await service.create(hub1Caller, input({ configurationId: "conf-1" }));
      await expect(service.patch(hub1Caller, own._id, schedulePatchSchema.parse({ configurationId: "conf-2" }))).rejects.toBeInstanceOf(
        ValidationError,
      );
      expect(items.get(`org-a/${own._id}`)?.schedule.configurationId).toBe("conf-1");
    });

    it("a schedule of another hub's profile is not found for read, write or delete", async () => {
      const { service, items } = restrictedSetup();
      const foreign = await service.create(caller(), input({ configurationId: "conf-2" }));
      await expect(service.get(hub1Caller, foreign._id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(service.replace(hub1Caller, foreign._id, input({ configurationId: "conf-1" }))).rejects.toBeInstanceOf(NotFoundError);
      await expect(service.patch(hub1Caller, foreign._id, schedulePatchSchema.parse({ active: false }))).rejects.toBeInstanceOf(
        NotFoundError,
      );
      await expect(service.remove(hub1Caller, foreign._id)).rejects.toBeInstanceOf(NotFoundError);
      expect(items.get(`org-a/${foreign._id}`)?.schedule).toMatchObject({ configurationId: "conf-2", active: true });
      await expect(service.get(caller({ hubIds: ["hub-1", "hub-2"] }), foreign._id)).resolves.toMatchObject({ _id: foreign._id });
    });

    it("a schedule whose profile is gone is visible only to unrestricted tokens", async () => {
      const profiles = new Map([["conf-1", "hub-1"]]);
      const { service } = setup({ configurationHub: async (_o, id) => profiles.get(id) });
      const created = await service.create(caller(), input({ configurationId: "conf-1" }));
      profiles.delete("conf-1"); // the profile is deleted afterwards
      await expect(service.get(hub1Caller, created._id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(service.get(caller(), created._id)).resolves.toMatchObject({ _id: created._id });
    });

    it("lists only the schedules of the token's hubs, without a hubId filter too", async () => {
      const { service, listCalls } = restrictedSetup();
      await service.create(caller(), input({ configurationId: "conf-1", name: "North" }));
      await service.create(caller(), input({ configurationId: "conf-2", name: "South" }));
      expect((await service.list(hub1Caller, { limit: 20 })).items.map((s) => s.name)).toEqual(["North"]);
      expect(listCalls.at(-1)?.configurationIds).toEqual(["conf-1"]);
      expect((await service.list(hub1Caller, { limit: 20, configurationId: "conf-2" })).items).toEqual([]);
      expect((await service.list(caller(), { limit: 20 })).items).toHaveLength(2);
    });
  });
});
