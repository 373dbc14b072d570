import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import { NotFoundError, ValidationError } from "#shared/domain/errors";
import { newId } from "#shared/domain/ids";
import {
  type RoutingSchedule,
  type ScheduleInput,
  scheduleInputSchema,
  type ScheduleListQuery,
  type SchedulePatch,
  type ScheduleRecord,
  writableScheduleFields,
} from "#shared/domain/schedules/schema";
import { formatWallClock, nextRunAfter, timeSchedules } from "#shared/domain/schedules/timetable";
import { formatDateTimeUtc } from "#shared/domain/time";
import { parseWith } from "#shared/domain/validation";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";

export interface SchedulePage<T> {
  items: T[];
  nextCursor: string | null;
}

export interface ScheduleListFilter {
  /** Only schedules of these configuration profiles (in this order); undefined = every schedule of the organization. */
  configurationIds?: string[] | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** Persistence port of routing schedules (implemented over DynamoDB in shared/store/schedule-store.ts). */
export interface ScheduleStore {
  /**
   * Writes the schedule and its due-index entry, and counts it on its configuration profile, in one
   * transaction that requires the profile to exist (400 naming `configurationId` otherwise): a
   * profile delete racing it either sees the count or makes this write fail.
   */
  insert(schedule: ScheduleRecord): Promise<void>;
  find(organizationId: string, scheduleId: string): Promise<{ schedule: ScheduleRecord; version: number } | undefined>;
  /**
   * Replaces the schedule and its due-index entry if it still has `previous.version` (else 409, or
   * 404 when gone); a new profile is counted (and must exist) and the previous one uncounted, in
   * the same transaction.
   */
  replace(schedule: ScheduleRecord, previous: { version: number; configurationId: string }): Promise<void>;
  /** Deletes the schedule and with it its due-index entry and its count on the profile; false when it was gone or changed. */
  remove(organizationId: string, scheduleId: string, previous: { version: number; configurationId: string }): Promise<boolean>;
  list(organizationId: string, filter: ScheduleListFilter): Promise<SchedulePage<ScheduleRecord>>;
}

/**
 * Port to configuration profiles: which profiles belong to a hub. Schedules carry no hub (the
 * profile supplies it), so the `hubId` filter and a hub-restricted token's view both resolve
 * through this.
 */
export interface HubConfigurations {
  configurationIdsOfHub(organizationId: string, hubId: string): Promise<string[]>;
}

export interface ScheduleServiceDependencies {
  store: ScheduleStore;
  hubConfigurations: HubConfigurations;
  /** IANA zone the wall-clock values of every schedule are read in (APP_TIMEZONE). */
  timeZone: () => string;
  now?: () => Date;
  /**
   * The hub of the organization's configuration profile, or undefined when there is no such
   * profile. A write that sets `configurationId` needs the profile to exist and its hub to be one
   * the caller's token allows (400 naming it otherwise); a hub-restricted caller sees only
   * schedules whose profile is on one of its hubs. Absent = neither is checked (unit tests of
   * timetable behaviour).
   */
  configurationHub?: (organizationId: string, configurationId: string) => Promise<string | undefined>;
  /**
   * The name of the organization's configuration profile: a schedule written without a name
   * (the spec's attribute table has none) takes it, so run results are still named
   * `{name} - {Y-m-d H:i}`. Absent or no such profile: `Routing schedule`.
   */
  configurationName?: (organizationId: string, configurationId: string) => Promise<string | undefined>;
}

/** Name of a schedule written without one when the profile's name cannot be read. */
export const FALLBACK_SCHEDULE_NAME = "Routing schedule";

/** The stored instant of the next run (ISO 8601 UTC), or null when none is left. */
export function nextRunAt(schedule: ScheduleInput, after: Date, timeZone: string): string | null {
  return nextRunAfter(schedule, after, timeZone)?.toISOString() ?? null;
}

export function createScheduleService({
  store,
  hubConfigurations,
  timeZone,
  now = () => new Date(),
  configurationHub,
  configurationName,
}: ScheduleServiceDependencies) {
  async function assertConfigurationUsable(caller: Caller, configurationId: string) {
    if (!configurationHub) return;
    const hubId = await configurationHub(caller.organizationId, configurationId);
    if (hubId === undefined) {
      throw ValidationError.single("configurationId", "configurationId must name a configuration profile of your organization");
    }
    if (!callerMayUseHub(caller, hubId)) {
      throw ValidationError.single("configurationId", "configurationId must name a profile of a hub your token allows");
    }
  }

  /**
   * A hub-restricted caller may only see schedules planning one of its hubs; the profile says
   * which hub (one extra read, only for restricted tokens). A schedule whose profile is gone
   * plans no hub, so only unrestricted callers see it.
   */
  async function visibleTo(caller: Caller, schedule: ScheduleRecord): Promise<boolean> {
    if (caller.hubIds.length === 0 || !configurationHub) return true;
    const hubId = await configurationHub(caller.organizationId, schedule.configurationId);
    return hubId !== undefined && callerMayUseHub(caller, hubId);
  }

  function toResponse(record: ScheduleRecord): RoutingSchedule {
    const { nextRunAt: storedNextRun, logExecuted, ...rest } = record;
    return {
      ...rest,
      nextRunTime: storedNextRun === null ? null : formatWallClock(new Date(storedNextRun), timeZone()),
      timeZone: timeZone(),
      ...(logExecuted === undefined ? {} : { logExecuted }),
    };
  }

  async function findOwned(caller: Caller, scheduleId: string) {
    const found = await store.find(caller.organizationId, scheduleId);
    if (!found || !(await visibleTo(caller, found.schedule))) throw new NotFoundError();
    return found;
  }

  /** Derived fields (timetable, next run) are recomputed from the input on every write; a missing name is the profile's. */
  async function derived(caller: Caller, input: ScheduleInput, time: Date) {
    const name = input.name ?? (await configurationName?.(caller.organizationId, input.configurationId)) ?? FALLBACK_SCHEDULE_NAME;
    return { name, timeSchedules: timeSchedules(input), nextRunAt: nextRunAt(input, time, timeZone()) };
  }

  async function write(
    caller: Caller,
    existing: { schedule: ScheduleRecord; version: number },
    input: ScheduleInput,
    versions?: VersionCondition,
  ) {
    if (input.configurationId !== existing.schedule.configurationId) await assertConfigurationUsable(caller, input.configurationId);
    const time = now();
    const schedule: ScheduleRecord = {
      _id: existing.schedule._id,
      ...input,
      ...(await derived(caller, input, time)),
      ...(existing.schedule.logExecuted === undefined ? {} : { logExecuted: existing.schedule.logExecuted }),
      organizationId: caller.organizationId,
      createdBy: existing.schedule.createdBy,
      createdTime: existing.schedule.createdTime,
      updatedTime: formatDateTimeUtc(time),
    };
    await writeUnder(
      versions,
      () => store.replace(schedule, { version: existing.version, configurationId: existing.schedule.configurationId }),
      existing.version + 1,
    );
    return toResponse(schedule);
  }

  return {
    async create(caller: Caller, input: ScheduleInput): Promise<RoutingSchedule> {
      await assertConfigurationUsable(caller, input.configurationId);
      const time = now();
      const schedule: ScheduleRecord = {
        _id: newId(time),
        ...input,
        ...(await derived(caller, input, time)),
        organizationId: caller.organizationId,
        createdBy: caller.userId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
      };
      await store.insert(schedule);
      return toResponse(schedule);
    },

    async get(caller: Caller, scheduleId: string, versions?: VersionCondition): Promise<RoutingSchedule> {
      const found = await findOwned(caller, scheduleId);
      versions?.check(found.version);
      return toResponse(found.schedule);
    },

    /** Full replace: fields left out take their defaults; logExecuted and the audit fields are kept. */
    async replace(caller: Caller, scheduleId: string, input: ScheduleInput, versions?: VersionCondition): Promise<RoutingSchedule> {
      const existing = await findOwned(caller, scheduleId);
      versions?.check(existing.version);
      return write(caller, existing, input, versions);
    },

    /** Merges the patch over the stored schedule and validates the merged schedule as a whole. */
    async patch(caller: Caller, scheduleId: string, patch: SchedulePatch, versions?: VersionCondition): Promise<RoutingSchedule> {
      const existing = await findOwned(caller, scheduleId);
      versions?.check(existing.version);
      const current = Object.fromEntries(writableScheduleFields.map((field) => [field, existing.schedule[field]]));
      const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
      return write(caller, existing, parseWith(scheduleInputSchema, { ...current, ...changes }), versions);
    },

    async remove(caller: Caller, scheduleId: string, versions?: VersionCondition): Promise<void> {
      const existing = await findOwned(caller, scheduleId);
      versions?.check(existing.version);
      const previous = { version: existing.version, configurationId: existing.schedule.configurationId };
      if (!(await writeUnder(versions, () => store.remove(caller.organizationId, scheduleId, previous)))) throw new NotFoundError();
    },

    async list(caller: Caller, query: ScheduleListQuery): Promise<SchedulePage<RoutingSchedule>> {
      let configurationIds: string[] | undefined = query.configurationId === undefined ? undefined : [query.configurationId];
      if (query.hubId !== undefined) {
        if (!callerMayUseHub(caller, query.hubId)) throw ValidationError.single("hubId", "hubId must be one of the hubs your token allows");
        const ofHub = await hubConfigurations.configurationIdsOfHub(caller.organizationId, query.hubId);
        configurationIds = configurationIds === undefined ? ofHub : configurationIds.filter((id) => ofHub.includes(id));
      } else if (caller.hubIds.length > 0) {
        // A hub-restricted token lists only the schedules of its hubs' profiles (a query per
        // profile, bounded by the token's hubs), never the whole organization's.
        const ofHubs = (
          await Promise.all(caller.hubIds.map((hubId) => hubConfigurations.configurationIdsOfHub(caller.organizationId, hubId)))
        ).flat();
        configurationIds = configurationIds === undefined ? ofHubs : configurationIds.filter((id) => ofHubs.includes(id));
      }
      // No profile matches: nothing can match, nothing to read.
      if (configurationIds !== undefined && configurationIds.length === 0) return { items: [], nextCursor: null };
      const page = await store.list(caller.organizationId, { configurationIds, limit: query.limit, cursor: query.cursor });
      return { items: page.items.map(toResponse), nextCursor: page.nextCursor };
    },
  };
}

export type ScheduleService = ReturnType<typeof createScheduleService>;
