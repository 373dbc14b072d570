import * as z from "zod/mini";
import { parseDateValue } from "#shared/domain/data-types/values";
import {
  component,
  idSchema,
  ignoringServerSetKeys,
  writableKeysOf,
  pageQuery,
  storableNumber,
  timeOfDaySchema,
  clientText,
} from "#shared/domain/schemas";

/**
 * Visit: one stop a vehicle of the hub should make. Runs of a routing schedule collect the hub's
 * active visits (status UNASSIGNED or ONGOING), oldest first; dispatch assigns them to a vehicle.
 */
export const visitStatuses = ["UNASSIGNED", "ONGOING", "ASSIGNED", "EN_ROUTE", "ARRIVED", "DONE", "FAILED", "CANCELLED"] as const;
export type VisitStatus = (typeof visitStatuses)[number];

/** Statuses a routing run collects; only these visits are in the sparse active-visits index. */
export const activeVisitStatuses: readonly VisitStatus[] = ["UNASSIGNED", "ONGOING"];
export const isActiveVisitStatus = (status: VisitStatus) => activeVisitStatuses.includes(status);

export { type Coordinate, coordinateSchema } from "#shared/domain/coordinates";
import { coordinateObjectSchema, coordinateSchema } from "#shared/domain/coordinates";
import { noRequirements, visitProofSchema, visitRequirementsInputSchema, visitRequirementsSchema } from "#shared/domain/visits/proofs";

const dateTimePattern = /^\d{4}-\d{2}-\d{2} ([01]\d|2[0-3]):[0-5]\d$/;

/** `Y-m-d H:i` naming a real calendar date (no 2026-02-30); the date checked by the typed-field date parser (no luxon: it would cost these bundles' cold start). */
export function isWindowDateTime(value: string): boolean {
  return dateTimePattern.test(value) && parseDateValue(value.slice(0, 10)) !== undefined;
}

export function isWindowTimeOfDay(value: string): boolean {
  return timeOfDaySchema.safeParse(value).success;
}

const windowTimeSchema = z.string().check(
  clientText,
  z.refine((value) => isWindowDateTime(value) || isWindowTimeOfDay(value), { message: "must be Y-m-d H:i or H:i" }),
  z.describe("`H:i` (the day of the run) or `Y-m-d H:i`, in the hub's time zone."),
);

/**
 * A window in which service should start. `H:i` windows refer to the day of the run that plans
 * the visit; `Y-m-d H:i` windows to that date. Both ends use the same form and start < end
 * (an `H:i` window cannot span midnight: use dated windows for that).
 */
export const timeWindowSchema = z.strictObject({ startTime: windowTimeSchema, endTime: windowTimeSchema }).check(
  z.superRefine((window, ctx) => {
    if (isWindowDateTime(window.startTime) !== isWindowDateTime(window.endTime)) {
      ctx.addIssue({ code: "custom", path: ["endTime"], message: "startTime and endTime must both be H:i or both be Y-m-d H:i" });
    } else if (window.endTime <= window.startTime) {
      // Same fixed-width form on both ends, so text order is time order.
      ctx.addIssue({ code: "custom", path: ["endTime"], message: "endTime must be after startTime" });
    }
  }),
);

export type TimeWindow = z.infer<typeof timeWindowSchema>;

const tagSchema = z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(50));

/**
 * Set by dispatch and the lifecycle only (shared/domain/visits/lifecycle.ts): like every server-set key,
 * ignored when a body sends them (never stored from a body).
 */
const dispatchFields = [
  "assignedVehicleId",
  "routingResultId",
  "routePlannedOrder",
  "eta",
  "etd",
  "attempts",
  "failureReason",
  "lastTransition",
  "proofs",
] as const;

/** Why a driver could not complete a visit (`fail`); OTHER wants notes. */
export const failureReasons = ["NOBODY_HOME", "REFUSED", "WRONG_ADDRESS", "DAMAGED", "NO_ACCESS", "OTHER"] as const;
export type FailureReason = (typeof failureReasons)[number];

/** Who made a status change. */
export const transitionSources = ["driver", "dispatcher", "system", "geofence"] as const;
export type TransitionSource = (typeof transitionSources)[number];

/** A driver's position as the app reports it. */
export const reportedPositionSchema = z.strictObject({
  lat: storableNumber().check(z.minimum(-90), z.maximum(90)),
  lng: storableNumber().check(z.minimum(-180), z.maximum(180)),
  accuracyM: z.optional(storableNumber().check(z.minimum(0), z.maximum(100_000))),
});
export type ReportedPosition = z.infer<typeof reportedPositionSchema>;

/** One status change of a visit: the visit's last one, and each item of its history (GET /visit/{id}/history). */
export const visitTransitionSchema = z.object({
  from: z.enum(visitStatuses),
  to: z.enum(visitStatuses),
  at: z.string().check(clientText, z.describe("When it happened (ISO 8601, UTC): the driver's `at`, else the server's time.")),
  source: z.enum(transitionSources),
  userId: z.string().check(clientText),
  position: z.nullable(reportedPositionSchema),
  failureReason: z.nullable(z.enum(failureReasons)),
  notes: z.nullable(z.string().check(clientText)),
  /** Changes recorded before proofs existed read as naming none. */
  proofIds: z._default(z.array(z.string().check(clientText)).check(z.describe("The proofs the action named (proof of delivery).")), []),
  /** The visit's version this change produced (history order). */
  version: z.number(),
  /** Changes recorded before dispatch entries existed, and every other change, name none. */
  vehicleId: z._default(
    z
      .nullable(z.string().check(clientText))
      .check(z.describe("The vehicle a dispatch (→ ASSIGNED) gave the visit; null for other changes.")),
    null,
  ),
  routingResultId: z._default(
    z
      .nullable(z.string().check(clientText))
      .check(z.describe("The routing result a dispatch (→ ASSIGNED) came from; null for other changes.")),
    null,
  ),
});
export type VisitTransition = z.infer<typeof visitTransitionSchema>;

/**
 * Who dispatched a visit, stored on it by the dispatch's own conditional write: the stream reads it
 * to append the dispatch to the visit's history (shared/domain/visits/dispatch-history.ts).
 */
export const dispatchedBySchema = z.object({
  source: z.enum(["dispatcher", "system"]),
  userId: z.string(),
  /** When (ISO 8601, UTC): with the result, what makes two dispatches of one visit two entries. */
  at: z.string(),
});
export type DispatchedBy = z.infer<typeof dispatchedBySchema>;

const visitShape = {
  hubId: z
    .string()
    .check(
      clientText,
      z.trim(),
      z.minLength(1),
      z.maxLength(64),
      z.describe("An existing hub of the organization (400 otherwise). Changing it moves the visit to that hub."),
    ),
  name: z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(200)),
  address: z.nullable(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(500))),
  coordinate: coordinateSchema,
  timeWindows: z
    .array(timeWindowSchema)
    .check(z.maxLength(10), z.describe("Service must start inside one of them; empty = any time the vehicle works.")),
  visitTime: z
    .nullable(storableNumber().check(z.minimum(0), z.maximum(1440)))
    .check(z.describe("Service duration in minutes; null = the configuration profile's defaultVisitTime.")),
  capacity: z
    .strictObject({ weight: z.optional(storableNumber().check(z.minimum(0))), volume: z.optional(storableNumber().check(z.minimum(0))) })
    .check(z.describe("Load the visit takes up on the vehicle, in the units of the vehicles' capacity.")),
  tags: z.array(tagSchema).check(
    z.maxLength(10),
    z.refine((tags) => new Set(tags).size === tags.length, { message: "tags must be distinct" }),
    z.describe("Only a vehicle whose tags include all of these may serve the visit."),
  ),
  status: z
    .enum(visitStatuses)
    .check(
      z.describe(
        "UNASSIGNED and ONGOING visits are active (collected by routing runs). ASSIGNED is set by dispatch only. Setting UNASSIGNED clears the dispatch fields.",
      ),
    ),
  priority: storableNumber().check(
    z.int(),
    z.minimum(1),
    z.maximum(5),
    z.describe(
      "1 (lowest) to 5 (highest), default 3. When a run cannot serve every visit, lower priorities are dropped first: one visit of a priority outweighs any number of visits of lower priorities.",
    ),
  ),
  pickupVisitId: z
    .nullable(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(64)))
    .check(
      z.describe(
        "Makes this visit the delivery of a pickup-and-delivery pair: the id of its pickup, an existing visit of the same hub that is in no other pair (400 otherwise). A run serves both on one vehicle, the pickup first, or drops both; the pickup's capacity is on board from the pickup to the delivery (this visit's own capacity is ignored). null = an ordinary visit.",
      ),
    ),
  requirements: visitRequirementsInputSchema.check(
    z.describe(
      "Proof of delivery a driver's `complete` needs (400 naming each one unmet): `photo` and `signature` a proof of that kind, `notes` non-empty notes. Each false when not sent.",
    ),
  ),
};

export const visitDefaults = {
  address: null,
  timeWindows: [],
  visitTime: null,
  capacity: {},
  tags: [],
  status: "UNASSIGNED",
  priority: 3,
  pickupVisitId: null,
  requirements: noRequirements,
} as const;

const visitInputObject = z.strictObject({
  hubId: visitShape.hubId,
  name: visitShape.name,
  address: z._default(visitShape.address, visitDefaults.address),
  coordinate: visitShape.coordinate,
  timeWindows: z._default(visitShape.timeWindows, []),
  visitTime: z._default(visitShape.visitTime, visitDefaults.visitTime),
  capacity: z._default(visitShape.capacity, {}),
  tags: z._default(visitShape.tags, []),
  status: z._default(visitShape.status, visitDefaults.status),
  priority: z._default(visitShape.priority, visitDefaults.priority),
  pickupVisitId: z._default(visitShape.pickupVisitId, visitDefaults.pickupVisitId),
  requirements: z._default(visitShape.requirements, { ...noRequirements }),
});
export const visitInputSchema = ignoringServerSetKeys(visitInputObject, dispatchFields);
export type VisitInput = z.infer<typeof visitInputSchema>;

const visitCreateBody = z.extend(visitInputObject, {
  status: z._default(
    visitShape.status.check(
      z.refine((status) => status !== "ASSIGNED", {
        message: "status cannot be ASSIGNED: only dispatching a routing result assigns a visit",
      }),
    ),
    visitDefaults.status,
  ),
});
/** POST: a new visit cannot start ASSIGNED — checked in the schema, so it is listed with every other bad field. */
export const visitCreateSchema = ignoringServerSetKeys(visitCreateBody, dispatchFields);

const visitPatchBody = z
  .partial(z.strictObject(visitShape))
  .check(z.refine((patch) => Object.keys(patch).length > 0, { message: "send at least one field to change" }));
export const visitPatchSchema = ignoringServerSetKeys(visitPatchBody, dispatchFields);
export type VisitPatch = z.infer<typeof visitPatchSchema>;

export const writableVisitFields = writableKeysOf(visitInputObject);

export const visitDispatchSchema = z.object({
  assignedVehicleId: z.nullable(z.string().check(clientText)).check(z.describe("Vehicle the visit was dispatched to.")),
  routingResultId: z.nullable(z.string().check(clientText)).check(z.describe("Routing result the dispatch came from.")),
  routePlannedOrder: z.nullable(z.number().check(z.int())).check(z.describe("1-based position on the vehicle's route.")),
  eta: z.nullable(z.string().check(clientText)).check(z.describe("Planned arrival, Y-m-d H:i (the hub's time zone).")),
  etd: z.nullable(z.string().check(clientText)).check(z.describe("Planned departure, Y-m-d H:i (the hub's time zone).")),
});
export type VisitDispatch = z.infer<typeof visitDispatchSchema>;

export const noDispatch: VisitDispatch = { assignedVehicleId: null, routingResultId: null, routePlannedOrder: null, eta: null, etd: null };

export const visitSchema = z.object({
  _id: idSchema,
  hubId: z.string().check(clientText),
  name: z.string().check(clientText),
  address: z.nullable(z.string().check(clientText)),
  coordinate: coordinateObjectSchema,
  timeWindows: z.array(z.object({ startTime: z.string().check(clientText), endTime: z.string().check(clientText) })),
  visitTime: z.nullable(z.number()),
  capacity: visitShape.capacity,
  tags: z.array(z.string().check(clientText)),
  status: z.enum(visitStatuses),
  /** Visits stored before priorities existed read as the default. */
  priority: z._default(z.number(), visitDefaults.priority),
  /** Visits stored before pairs existed read as ordinary visits. */
  pickupVisitId: z._default(z.nullable(z.string().check(clientText)), visitDefaults.pickupVisitId),
  ...visitDispatchSchema.shape,
  /** Visits stored before the lifecycle read as never failed, never moved. */
  attempts: z._default(z.number().check(z.describe("Times a FAILED visit was put back in the pool (FAILED → UNASSIGNED).")), 0),
  failureReason: z._default(z.nullable(z.enum(failureReasons)), null),
  lastTransition: z._default(z.nullable(visitTransitionSchema), null),
  /** Visits stored before proof of delivery read as requiring and holding none. */
  requirements: z._default(visitRequirementsSchema, { ...noRequirements }),
  proofs: z._default(
    z.array(visitProofSchema).check(z.describe("Proofs named by the driver's progress actions (GET /visit/{visitId}/proofs to download).")),
    [],
  ),
  organizationId: z.string().check(clientText),
  createdTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
  updatedTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
});
export type Visit = z.infer<typeof visitSchema>;

export const visitParamsSchema = z.strictObject({ visitId: z.string().check(clientText, z.minLength(1), z.maxLength(64)) });

export const visitListQuerySchema = pageQuery({
  hubId: z.optional(z.string().check(clientText, z.minLength(1), z.maxLength(64))).check(z.describe("Visits of this hub only.")),
  status: z.optional(z.enum(visitStatuses)).check(z.describe("Visits in this status only.")),
});
export type VisitListQuery = z.infer<typeof visitListQuerySchema>;

export const progressActionNames = ["start", "undo", "arrive", "complete", "fail"] as const;

/** An ISO 8601 instant with a zone (a driver's `at`; vehicle positions too). */
export const isoInstant = z.string().check(
  clientText,
  z.maxLength(40),
  z.refine(
    (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value)),
    {
      message: "must be an ISO 8601 date-time with a zone, e.g. 2026-11-27T09:15:00Z",
    },
  ),
);

/** POST /visit/{visitId}/progress: one driver action. */
export const visitProgressSchema = z
  .strictObject({
    action: z.enum(progressActionNames),
    at: z.optional(isoInstant.check(z.describe("When it happened (default: now); within the last 24 h and at most 60 s ahead."))),
    position: z.optional(reportedPositionSchema),
    notes: z.optional(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(1000))),
    failureReason: z.optional(
      z.enum(failureReasons).check(z.describe("Required with `fail` (OTHER wants `notes`); not allowed otherwise.")),
    ),
    proofIds: z.optional(
      z
        .array(idSchema)
        .check(
          z.maxLength(20),
          z.describe(
            "Proofs uploaded through POST /visit/{visitId}/proofs that this action records (each must be uploaded: 400 otherwise). `complete` checks the visit's `requirements` against them and the proofs recorded before.",
          ),
        ),
    ),
  })
  .check(
    z.superRefine((body, ctx) => {
      if (body.action === "fail" && body.failureReason === undefined)
        ctx.addIssue({ code: "custom", path: ["failureReason"], message: "failureReason is required to fail a visit" });
      if (body.action !== "fail" && body.failureReason !== undefined)
        ctx.addIssue({ code: "custom", path: ["failureReason"], message: "failureReason goes only with action fail" });
      if (body.failureReason === "OTHER" && body.notes === undefined)
        ctx.addIssue({ code: "custom", path: ["notes"], message: "notes are required with failureReason OTHER" });
    }),
  );
export type VisitProgress = z.infer<typeof visitProgressSchema>;

export const visitHistoryQuerySchema = pageQuery({});

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("Visit", visitSchema);
component("VisitInput", visitCreateSchema);
component("VisitPatch", visitPatchSchema);
