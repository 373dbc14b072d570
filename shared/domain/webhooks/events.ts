import * as z from "zod/mini";
import { component, idSchema } from "#shared/domain/schemas";

/**
 * Domain events: what an integration is told when a run finishes, a plan is dispatched, a scheduled
 * run is skipped or an import ends. Every event is the Standard Webhooks payload shape
 * `{ type, timestamp, data }`; `data` names the organization and the ids a client needs to fetch the
 * rest through the API (never the resource itself, so a payload never outlives a permission).
 */
export const eventTypes = [
  "routing.result.completed",
  "routing.result.failed",
  "routing.result.dispatched",
  "routing.schedule.skipped",
  "data-type.import.completed",
  "data-type.import.failed",
  "visit.started",
  "visit.arrived",
  "visit.completed",
  "visit.failed",
  "visit.unassigned",
  "visit.eta.changed",
  "visit.risk.changed",
] as const;
export type EventType = (typeof eventTypes)[number];

const timestampField = z
  .string()
  .check(
    z.describe(
      "When the state changed, as the state records it: ISO 8601 UTC with milliseconds, e.g. 2026-11-25T09:25:03.000Z (routing results and imports record whole seconds, so their milliseconds are 000).",
    ),
  );
const organizationField = z.string().check(z.describe("The organization whose state changed."));

const resultData = {
  organizationId: organizationField,
  resultId: idSchema.check(z.describe("`_id` of the routing result: GET /routing/result/{resultId}.")),
  hubId: z.string(),
  configurationId: z.string(),
  scheduleId: z.nullable(z.string()).check(z.describe("The schedule whose run this was; null for an on-demand run.")),
};

/** `routing.result.completed` → `RoutingResultCompletedEvent`: the event's OpenAPI component name. */
const componentName = (type: string) =>
  `${type.replaceAll(/(^|[.-])(\w)/g, (_all, _separator, letter: string) => letter.toUpperCase())}Event`;

function eventSchema<T extends string, D extends z.ZodMiniType>(type: T, data: D, description: string) {
  return component(
    componentName(type),
    z.object({ type: z.literal(type), timestamp: timestampField, data }).check(z.describe(description)),
  );
}

const visitStatusField = z.string().check(z.describe("A visit status (docs/api/execution.md)."));

/** Visit lifecycle events (docs/api/execution.md): one per status change, from the visit's `lastTransition`. */
function visitEvent<T extends EventType>(type: T, description: string) {
  return eventSchema(
    type,
    z.object({
      organizationId: organizationField,
      visitId: idSchema.check(z.describe("`_id` of the visit: GET /visit/{visitId}.")),
      hubId: z.string(),
      vehicleId: z.nullable(z.string()).check(z.describe("The vehicle the visit was assigned to when it changed.")),
      from: visitStatusField,
      to: visitStatusField,
      source: z.string().check(z.describe("driver, dispatcher, system or geofence.")),
      failureReason: z.nullable(z.string()),
    }),
    description,
  );
}

const riskField = z.enum(["ON_TIME", "AT_RISK", "LATE"]);

/** Live ETA events (docs/api/execution.md, "Live route and ETAs"): from the vehicle's live route, re-projected at each progress action. */
function liveEtaEvent<T extends EventType, S extends Record<string, z.ZodMiniType>>(type: T, extra: S, description: string) {
  return eventSchema(
    type,
    z.object({
      organizationId: organizationField,
      visitId: idSchema.check(z.describe("`_id` of the visit: GET /visit/{visitId}.")),
      hubId: z.string(),
      vehicleId: z.string().check(z.describe("The vehicle whose live route it is: GET /vehicle/{vehicleId}/route.")),
      routingResultId: z.string().check(z.describe("The result whose dispatch gave the vehicle the route.")),
      plannedEta: z.nullable(z.string()).check(z.describe("The dispatched arrival, Y-m-d H:i (hub's time zone).")),
      eta: z.string().check(z.describe("The projected arrival now, Y-m-d H:i.")),
      risk: riskField,
      slackMinutes: z.nullable(z.number()),
      ...extra,
    }),
    description,
  );
}

export const eventSchemas = {
  "routing.result.completed": eventSchema(
    "routing.result.completed",
    z.object({ ...resultData, status: z.literal("done") }),
    "A routing run (on demand or scheduled) finished with a plan: read it with GET /routing/result/{resultId}.",
  ),
  "routing.result.failed": eventSchema(
    "routing.result.failed",
    z.object({ ...resultData, status: z.literal("failed"), message: z.string().check(z.describe("Why the run failed.")) }),
    "A routing run ended without a plan (after its last attempt).",
  ),
  "routing.result.dispatched": eventSchema(
    "routing.result.dispatched",
    z.object({ ...resultData, vehicleIds: z.array(z.string()).check(z.describe("The vehicles the plan was dispatched to.")) }),
    "A routing result was dispatched: its visits now carry their vehicle and order.",
  ),
  "routing.schedule.skipped": eventSchema(
    "routing.schedule.skipped",
    z.object({
      organizationId: organizationField,
      scheduleId: z.string(),
      hubId: z
        .nullable(z.string())
        .check(z.describe("The hub of the schedule's configuration profile; null when the profile no longer exists.")),
      slot: z.string().check(z.describe("The run slot (ISO 8601 UTC minute) that was skipped.")),
      reason: z.string().check(z.describe("Why the scheduled run did not start, e.g. the organization's cap of active runs.")),
    }),
    "A scheduled run was recorded SKIPPED instead of running.",
  ),
  "data-type.import.completed": eventSchema(
    "data-type.import.completed",
    z.object({
      organizationId: organizationField,
      dataTypeId: z.string(),
      importId: z.string(),
      processed: z.number().check(z.describe("Records written.")),
    }),
    "An import of records into a data type finished.",
  ),
  "data-type.import.failed": eventSchema(
    "data-type.import.failed",
    z.object({ organizationId: organizationField, dataTypeId: z.string(), importId: z.string(), message: z.string() }),
    "An import of records into a data type stopped with an error.",
  ),
  "visit.started": visitEvent("visit.started", "A driver started towards the visit (EN_ROUTE)."),
  "visit.arrived": visitEvent("visit.arrived", "The vehicle arrived at the visit (ARRIVED)."),
  "visit.completed": visitEvent("visit.completed", "The visit was completed (DONE)."),
  "visit.failed": visitEvent("visit.failed", "The visit could not be completed (FAILED, with its failureReason)."),
  "visit.unassigned": visitEvent(
    "visit.unassigned",
    "The visit went back to the pool (UNASSIGNED), e.g. a failed visit to be tried again.",
  ),
  "visit.eta.changed": liveEtaEvent(
    "visit.eta.changed",
    { previousEta: z.string().check(z.describe("The ETA announced before (at first: the planned one).")) },
    "A visit's projected arrival moved by at least the profile's etaChangeMinutes from the last one announced (at most one per visit per 5 minutes).",
  ),
  "visit.risk.changed": liveEtaEvent(
    "visit.risk.changed",
    { previousRisk: riskField.check(z.describe("The risk announced before (at first: the plan's).")) },
    "A visit's projected risk changed (ON_TIME, AT_RISK, LATE).",
  ),
} as const satisfies Record<EventType, z.ZodMiniType>;

/** POST /webhook/{id}/test sends this to one subscription (never on the bus, so not an EventType). */
export const webhookTestEventSchema = eventSchema(
  "webhook.test",
  z.object({ organizationId: organizationField, webhookId: z.string().check(z.describe("The webhook the test was sent to.")) }),
  "A test event asked for with POST /webhook/{webhookId}/test.",
);

export type DomainEvent = { [T in EventType]: z.infer<(typeof eventSchemas)[T]> }[EventType];
export type EventOf<T extends EventType> = z.infer<(typeof eventSchemas)[T]>;

/**
 * The permission that reads what each event type tells: a subscription may name an event type only
 * when its creator holds that slug (403 sys-035 naming it otherwise). One entry per event type;
 * a new event type adds its entry here (the `satisfies` makes a missing one a type error).
 */
export const eventReadPermission = {
  "routing.result.completed": "view/routing-result",
  "routing.result.failed": "view/routing-result",
  "routing.result.dispatched": "view/routing-result",
  "routing.schedule.skipped": "view/routing-schedule",
  "data-type.import.completed": "view/data-type",
  "data-type.import.failed": "view/data-type",
  "visit.started": "view/visit",
  "visit.arrived": "view/visit",
  "visit.completed": "view/visit",
  "visit.failed": "view/visit",
  "visit.unassigned": "view/visit",
  "visit.eta.changed": "view/visit",
  "visit.risk.changed": "view/visit",
} as const satisfies Record<EventType, string>;

/** The hub an event is about, or null for an organization-wide event (imports; a skip whose profile is gone). */
export function hubOfEvent(event: DomainEvent): string | null {
  const hubId = "hubId" in event.data ? event.data.hubId : null;
  return typeof hubId === "string" && hubId !== "" ? hubId : null;
}

/**
 * Whether a subscription whose creator's hub scope is `hubIds` (empty or absent: the whole
 * organization) may receive `event`: a hub-scoped subscription only events of its hubs, never an
 * organization-wide one.
 */
export function scopeAdmits(hubIds: readonly string[] | undefined, event: DomainEvent): boolean {
  if (!hubIds || hubIds.length === 0) return true;
  const hub = hubOfEvent(event);
  return hub !== null && hubIds.includes(hub);
}

/** A stored event: the payload plus its id (the `webhook-id` of every delivery of it, stable across retries). */
export interface StoredEvent {
  id: string;
  organizationId: string;
  event: DomainEvent;
}
