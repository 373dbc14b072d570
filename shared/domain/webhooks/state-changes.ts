import { createHash } from "node:crypto";
import { dispatchHistoryEntity } from "#shared/domain/visits/dispatch-history";
import type { DomainEvent, StoredEvent } from "#shared/domain/webhooks/events";

/**
 * Events from the state change itself: the table's stream carries every committed write of an item
 * with its image before and after (NEW_AND_OLD_IMAGES), so the item that changed is its own outbox
 * record: an event cannot be lost after the write commits, and no write carries an extra item.
 * This reads one such change and answers the events it means (none for most writes).
 *
 * An event's id is derived from the change (the item and the state it reached), so a stream
 * record read twice yields the same id, which every delivery of it carries as `webhook-id`.
 */
export type Image = Record<string, unknown> | undefined;

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const objectOf = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

function eventIdOf(...parts: Array<string | undefined>): string {
  return `evt_${createHash("sha256")
    .update(parts.map((part) => part ?? "").join("\u0000"))
    .digest("hex")
    .slice(0, 32)}`;
}

/** "Y-m-d H:i:s" (UTC, as results store it) or ISO → ISO 8601 UTC. */
function isoOf(time: string | undefined, fallback: Date): string {
  if (!time) return fallback.toISOString();
  const parsed = new Date(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(time) ? `${time.replace(" ", "T")}Z` : time);
  return Number.isNaN(parsed.getTime()) ? fallback.toISOString() : parsed.toISOString();
}

function stored(organizationId: string, id: string, event: DomainEvent): StoredEvent {
  return { id, organizationId, event };
}

function resultEvents(before: Image, after: Record<string, unknown>, at: Date): StoredEvent[] {
  const organizationId = text(after.organizationId);
  const resultId = text(after._id);
  if (!organizationId || !resultId) return [];
  const base = {
    organizationId,
    resultId,
    hubId: text(after.hubId) ?? "",
    configurationId: text(after.configurationId) ?? "",
    scheduleId: text(after.scheduleId) ?? null,
  };
  const events: StoredEvent[] = [];
  const status = text(after.status);
  const finishedTime = text(after.finishedTime);
  const finishedNow = status !== text(before?.status) || finishedTime !== text(before?.finishedTime);
  if (status === "done" && finishedNow) {
    events.push(
      stored(organizationId, eventIdOf("routing.result.completed", organizationId, resultId, finishedTime), {
        type: "routing.result.completed",
        timestamp: isoOf(finishedTime, at),
        data: { ...base, status: "done" },
      }),
    );
  }
  if (status === "failed" && finishedNow) {
    events.push(
      stored(organizationId, eventIdOf("routing.result.failed", organizationId, resultId, finishedTime), {
        type: "routing.result.failed",
        timestamp: isoOf(finishedTime, at),
        data: { ...base, status: "failed", message: text(after.message) ?? "" },
      }),
    );
  }
  const dispatch = objectOf(after.dispatch);
  const previousDispatch = objectOf(before?.dispatch);
  // Each dispatch writes its own id (a record from before dispatch ids: its time): one event per dispatch.
  const dispatchIdentity = (record: Record<string, unknown> | undefined) => text(record?.dispatchId) ?? text(record?.dispatchedTime);
  const dispatchedNow = dispatchIdentity(dispatch);
  if (dispatch && dispatchedNow !== undefined && dispatchedNow !== dispatchIdentity(previousDispatch)) {
    const named = Array.isArray(dispatch.lastVehicleIds) ? dispatch.lastVehicleIds : dispatch.vehicleIds;
    const vehicleIds = Array.isArray(named) ? named.filter((id): id is string => typeof id === "string") : [];
    events.push(
      stored(organizationId, eventIdOf("routing.result.dispatched", organizationId, resultId, dispatchedNow), {
        type: "routing.result.dispatched",
        timestamp: isoOf(text(dispatch.dispatchedTime), at),
        data: { ...base, vehicleIds },
      }),
    );
  }
  return events;
}

function runClaimEvents(before: Image, after: Record<string, unknown>, at: Date): StoredEvent[] {
  if (text(after.status) !== "SKIPPED" || text(before?.status) === "SKIPPED") return [];
  const message = objectOf(after.message);
  const organizationId = text(message?.organizationId);
  const scheduleId = text(message?.scheduleId);
  const slot = text(message?.slot);
  if (!organizationId || !scheduleId || !slot) return [];
  return [
    stored(organizationId, eventIdOf("routing.schedule.skipped", organizationId, scheduleId, slot), {
      type: "routing.schedule.skipped",
      timestamp: isoOf(text(after.finishedAt), at),
      // The claim names no hub: the publisher reads the schedule's profile for it (shared/app/webhook-events.ts).
      data: { organizationId, scheduleId, hubId: null, slot, reason: text(after.outcome) ?? "skipped" },
    }),
  ];
}

function importEvents(before: Image, after: Record<string, unknown>, at: Date): StoredEvent[] {
  const state = objectOf(after.import);
  const phase = text(state?.phase);
  if ((phase !== "done" && phase !== "failed") || phase === text(objectOf(before?.import)?.phase)) return [];
  const organizationId = text(after.organizationId);
  const dataTypeId = text(after._id);
  const importId = text(state?.uploadId);
  if (!organizationId || !dataTypeId || !importId) return [];
  const id = eventIdOf(`data-type.import.${phase}`, organizationId, dataTypeId, importId);
  const timestamp = isoOf(text(state?.finishedTime), at);
  return [
    phase === "done"
      ? stored(organizationId, id, {
          type: "data-type.import.completed",
          timestamp,
          data: { organizationId, dataTypeId, importId, processed: Number(state?.processed ?? 0) },
        })
      : stored(organizationId, id, {
          type: "data-type.import.failed",
          timestamp,
          data: { organizationId, dataTypeId, importId, message: text(state?.message) ?? "the import failed" },
        }),
  ];
}

/** The visit event each status a change reaches means (other statuses: none). */
const visitEventOfStatus = {
  EN_ROUTE: "visit.started",
  ARRIVED: "visit.arrived",
  DONE: "visit.completed",
  FAILED: "visit.failed",
  UNASSIGNED: "visit.unassigned",
} as const;

/** A visit's status change (its `lastTransition` reached a new version) as its event. */
function visitEvents(before: Image, after: Record<string, unknown>, at: Date): StoredEvent[] {
  const transition = objectOf(after.lastTransition);
  const version = transition?.version;
  if (!transition || typeof version !== "number" || objectOf(before?.lastTransition)?.version === version) return [];
  const to = text(transition.to);
  const type = to !== undefined && to in visitEventOfStatus ? visitEventOfStatus[to as keyof typeof visitEventOfStatus] : undefined;
  const organizationId = text(after.organizationId);
  const visitId = text(after._id);
  if (!type || !organizationId || !visitId) return [];
  return [
    stored(organizationId, eventIdOf(type, organizationId, visitId, String(version)), {
      type,
      timestamp: isoOf(text(transition.at), at),
      data: {
        organizationId,
        visitId,
        hubId: text(after.hubId) ?? "",
        vehicleId: text(after.assignedVehicleId) ?? text(before?.assignedVehicleId) ?? null,
        from: text(transition.from) ?? "",
        to: to as string,
        source: text(transition.source) ?? "",
        failureReason: text(transition.failureReason) ?? null,
      },
    }),
  ];
}

/**
 * A vehicle's live route re-projected by a progress action (shared/domain/live/live-routes.ts): each visit
 * whose announced ETA or risk counter grew since the image before means one event. Counters restart with
 * each dispatch (a new `resultId`), so ids name the route's result too; a dispatch's own write (progress
 * reset) announces nothing.
 */
function liveRouteEvents(before: Image, after: Record<string, unknown>, at: Date): StoredEvent[] {
  const organizationId = text(after.organizationId);
  const vehicleId = text(after.vehicleId);
  const resultId = text(after.resultId);
  const states = objectOf(objectOf(after.progress)?.eta);
  if (!organizationId || !vehicleId || !resultId || !states) return [];
  const sameRoute = text(before?.resultId) === resultId;
  const previousStates = sameRoute ? objectOf(objectOf(before?.progress)?.eta) : undefined;
  const count = (value: unknown) => (typeof value === "number" ? value : 0);
  const events: StoredEvent[] = [];
  for (const [visitId, value] of Object.entries(states)) {
    const state = objectOf(value);
    if (!state) continue;
    const previous = objectOf(previousStates?.[visitId]);
    const base = {
      organizationId,
      visitId,
      hubId: text(after.hubId) ?? "",
      vehicleId,
      routingResultId: resultId,
      plannedEta: text(state.plannedEta) ?? null,
      eta: text(state.eta) ?? "",
      risk: (text(state.risk) ?? "ON_TIME") as "ON_TIME" | "AT_RISK" | "LATE",
      slackMinutes: typeof state.slackMinutes === "number" ? state.slackMinutes : null,
    };
    const etaN = count(state.etaN);
    if (etaN > count(previous?.etaN))
      events.push(
        stored(organizationId, eventIdOf("visit.eta.changed", organizationId, vehicleId, resultId, visitId, String(etaN)), {
          type: "visit.eta.changed",
          timestamp: isoOf(text(state.etaAt), at),
          data: { ...base, previousEta: text(state.previousEta) ?? "" },
        }),
      );
    const riskN = count(state.riskN);
    if (riskN > count(previous?.riskN))
      events.push(
        stored(organizationId, eventIdOf("visit.risk.changed", organizationId, vehicleId, resultId, visitId, String(riskN)), {
          type: "visit.risk.changed",
          timestamp: isoOf(text(state.riskAt), at),
          data: { ...base, previousRisk: (text(state.previousRisk) ?? "ON_TIME") as "ON_TIME" | "AT_RISK" | "LATE" },
        }),
      );
  }
  return events;
}

type EventReader = (before: Image, after: Record<string, unknown>, at: Date) => StoredEvent[];

/**
 * The item entities whose changes can mean an event, each with its reader: the one declaration the
 * stream's filter on AWS (infra), the local stream poller's filter (both: `streamFilterPattern`) and
 * `eventsOfChange` derive from. A new event's entity added here reaches all three.
 */
const eventReaders = {
  routingResult: resultEvents,
  runClaim: runClaimEvents,
  dataType: importEvents,
  visit: visitEvents,
  liveRoute: liveRouteEvents,
} as const satisfies Record<string, EventReader>;

/** The entities whose stream records can mean an event (the keys of `eventReaders`). */
export const eventEntities = Object.keys(eventReaders) as ReadonlyArray<keyof typeof eventReaders>;

/**
 * Every entity the stream's consumer reads: the events' and the one whose dispatches it appends to
 * history (shared/domain/visits/dispatch-history.ts).
 */
export const streamEntities: readonly string[] = [...new Set<string>([...eventEntities, dispatchHistoryEntity])];

/**
 * The Lambda event-filter pattern of the publisher's stream source: records whose new image is an
 * item of one of `streamEntities` (a removal has no new image and is dropped). The CDK stack hands it to
 * `FilterCriteria.filter` as is; the local poller evaluates it with `matchesFilterPattern`.
 */
export const streamFilterPattern = { dynamodb: { NewImage: { entity: { S: streamEntities } } } } as const;

/** The events one committed write means; `at`: when the stream saw it (fallback timestamp). */
export function eventsOfChange(before: Image, after: Image, at: Date): StoredEvent[] {
  if (!after) return [];
  const entity = after.entity;
  if (typeof entity !== "string" || !Object.hasOwn(eventReaders, entity)) return [];
  return eventReaders[entity as keyof typeof eventReaders](before, after, at);
}
