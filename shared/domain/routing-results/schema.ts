import * as z from "zod/mini";
import { component, idSchema, pageQuery, clientText, storableNumber } from "#shared/domain/schemas";
import { routingEnds } from "#shared/routing/model";
import { dropReasonCodes } from "#shared/routing/explain";

/**
 * Routing result: the plan one run of the optimizer produced for a hub — per vehicle an ordered
 * route with eta/etd, the visits it could not place and why, and a summary. Created by routing
 * schedule runs (`createdFrom: SCHEDULER`) and on demand (`createdFrom: API`).
 */
export const resultStatuses = ["ongoing", "done", "failed"] as const;
export type ResultStatus = (typeof resultStatuses)[number];
/** SCHEDULER: a schedule's run; API: POST /routing/result; REOPTIMIZE: POST /routing/result/{id}/reoptimize (a re-plan of a live day). */
export const resultOrigins = ["SCHEDULER", "API", "REOPTIMIZE"] as const;
export type ResultOrigin = (typeof resultOrigins)[number];

const loadSchema = z
  .record(z.string().check(clientText), z.number())
  .check(z.describe("Load per enforced capacity dimension (weight, volume)."));

export const resultTripSchema = z.object({
  order: z.number().check(z.int(), z.describe("1-based position on the route.")),
  visitId: z.string().check(clientText),
  visitName: z.string().check(clientText),
  coordinate: z.object({ lat: z.number(), lng: z.number() }),
  eta: z.string().check(clientText, z.describe("Arrival, Y-m-d H:i in the hub's time zone.")),
  etd: z.string().check(clientText, z.describe("Departure after service, Y-m-d H:i in the hub's time zone.")),
  serviceStart: z.string().check(clientText, z.describe("Start of service (arrival plus waiting), Y-m-d H:i.")),
  waitingMinutes: z.number(),
  distanceMeters: z.number().check(z.describe("Driven from the previous stop (or the hub).")),
  load: loadSchema.check(z.describe("Load delivered so far on this route, this visit included.")),
  pinnedFromResultId: z.optional(
    z
      .string()
      .check(
        clientText,
        z.describe(
          "A visit already dispatched to this vehicle by that result (re-sequenced, not moved): dispatch updates it only while it is still under that result.",
        ),
      ),
  ),
  releasedFromResultId: z.optional(
    z
      .string()
      .check(
        clientText,
        z.describe(
          "A re-plan's visit that was still ASSIGNED under that result and was released to the pool (reoptimize `assigned: free` or `releaseVehicleIds`): dispatch updates it only while it is still ASSIGNED under that result.",
        ),
      ),
  ),
  travelMinutes: z.optional(
    z
      .number()
      .check(
        z.describe(
          "The run's own travel minutes into this stop (from the previous stop or the start), unrounded: live ETAs (GET /vehicle/{vehicleId}/route) scale them by the day's pace. Absent on results stored before live ETAs.",
        ),
      ),
  ),
  window: z.optional(
    z
      .nullable(z.string().check(clientText))
      .check(
        z.describe(
          "The visit's time windows as stored (H:i–H:i on the planning day, or Y-m-d H:i–Y-m-d H:i), comma-separated; null without.",
        ),
      ),
  ),
});

export const resultRouteSchema = z.object({
  vehicleId: z.string().check(clientText),
  vehicleName: z.string().check(clientText),
  departure: z.string().check(clientText, z.describe("Leaves the hub, Y-m-d H:i.")),
  arrival: z.string().check(clientText, z.describe("Back at the hub (or done with the last visit when returnToHub is false), Y-m-d H:i.")),
  distanceMeters: z.number(),
  durationMinutes: z.number(),
  travelMinutes: z.number(),
  waitingMinutes: z.number(),
  serviceMinutes: z.number(),
  load: loadSchema,
  breaks: z.array(
    z.object({
      start: z.string().check(clientText),
      end: z.string().check(clientText),
      afterOrder: z.number().check(z.int(), z.describe("0 = before the first visit.")),
    }),
  ),
  trips: z.array(resultTripSchema),
  servedVisitIds: z.optional(
    z
      .array(z.string().check(clientText))
      .check(z.describe("On a live day: the vehicle's visits already finished or under way when the run planned (not re-planned).")),
  ),
  timing: z.optional(
    z
      .object({
        origin: z.string().check(clientText, z.describe("The planning origin: the run instant cut to its minute, ISO 8601 UTC.")),
        departureMinutes: z.number().check(z.describe("Departure, minutes after origin (unrounded).")),
        returnMinutes: z.number().check(z.describe("Travel minutes from the last stop to the route's end (0 when it does not return).")),
        breaks: z.array(z.object({ startMinutes: z.number(), durationMinutes: z.number() })),
      })
      .check(
        z.describe(
          "The plan's times in the optimizer's own minutes, so live ETAs replay it to the minute (docs/api/execution.md, Live route and ETAs). Absent on results stored before live ETAs.",
        ),
      ),
  ),
  roadGeometry: z.optional(
    z
      .object({
        legs: z
          .array(z.string())
          .check(
            z.describe(
              "One encoded polyline (Google's format, precision 5, latitude first) per leg: from the vehicle's start to trip 1, trip 1 to trip 2, …, and the drive back when the route returns.",
            ),
          ),
      })
      .check(
        z.describe(
          "The roads the route drives, from the profile's travel provider's route service (osrm), simplified; absent when the plan's travel was great circle or the route service gave none (summary.travel.geometry says why). The map and GeoJSON draw it.",
        ),
      ),
  ),
});

export const resultDroppedSchema = z.object({
  visitId: z.string().check(clientText),
  releasedFromResultId: z.optional(
    z
      .string()
      .check(
        clientText,
        z.describe(
          "A re-plan's visit that was still ASSIGNED under that result and was released to the pool (reoptimize `assigned: free` or `releaseVehicleIds`): dispatch updates it only while it is still ASSIGNED under that result, and returns it to UNASSIGNED (a visit.unassigned event, a history entry with source system).",
        ),
      ),
  ),

  visitName: z.string().check(clientText),
  reason: z
    .string()
    .check(
      clientText,
      z.describe(
        "A sentence for people. Before the search: bad coordinates | no vehicle with matching tags | exceeds every vehicle's capacity | outside every working time | pickup and delivery cannot both be served. Left out by the search: could not be fitted, then why. Programs read reasonCode.",
      ),
    ),
  reasonCode: z.optional(
    z
      .enum(dropReasonCodes)
      .check(
        z.describe(
          "Why, stable (docs/api/routing-runs.md, Reason codes): capacity (the dimension in reasonDetail), timeWindow, workingTime, break, maxVisits, maxDistance, maxDuration, noCompatibleVehicle (tags), pickupDelivery, badCoordinates, lowPriority (it would fit, but serving it costs more than the plan gains), or unexplained (the explanation reached its time cap before this visit; summary.explanationCut is true). A visit the search left out is tried at every position of every route with one constraint family relaxed at a time; the code is the family whose relaxation lets it in on the most vehicles. Absent on results stored before reason codes.",
        ),
      ),
  ),
  reasonDetail: z.optional(
    z
      .nullable(z.string().check(clientText))
      .check(z.describe("For capacity: the binding dimension(s), weight and/or volume, comma-separated; null otherwise.")),
  ),
});

export const travelReportSchema = z.object({
  provider: z.string().check(z.describe("The travel provider the profile named (greatCircle when it named none).")),
  source: z
    .string()
    .check(
      z.describe("Where the plan's durations and distances came from: greatCircle, osrm or amazonLocation (greatCircle after a fallback)."),
    ),
  elementsRequested: z
    .number()
    .check(z.int(), z.describe("Road-matrix entries asked of the provider (metered; cached entries are not asked again).")),
  elementsCached: z.number().check(z.int(), z.describe("Entries taken from the hub's travel cache.")),
  matrixSeconds: z.number().check(z.describe("Time spent getting the matrix; it came out of the optimizer's time budget.")),
  fallbackReason: z
    .nullable(z.string())
    .check(z.describe("Why the provider's matrix was not used (travelFallback greatCircle); null otherwise.")),
  geometry: z.optional(
    z
      .object({
        lines: z
          .enum(["road", "straight", "mixed"])
          .check(z.describe("road: every route has its road geometry; straight: none has (great-circle lines); mixed: some.")),
        routesWithRoads: z.number().check(z.int()),
        requests: z.number().check(z.int(), z.describe("Route-service requests asked.")),
        elementsRequested: z
          .number()
          .check(z.int(), z.describe("Legs answered by the route service, charged as travel elements (beside the matrix's).")),
        reason: z
          .nullable(z.string())
          .check(z.describe("Why routes are drawn straight (skipped for time, refused, failed, no route service); null otherwise.")),
      })
      .check(z.describe("The routes' road geometry (absent on results stored before it).")),
  ),
});
export type TravelReport = z.infer<typeof travelReportSchema>;

export const resultSummarySchema = z.object({
  vehiclesUsed: z.number().check(z.int()),
  vehiclesAvailable: z.number().check(z.int()),
  visitsPlanned: z.number().check(z.int(), z.describe("Active visits the run collected (at most 1,500, oldest first).")),
  visitsAssigned: z.number().check(z.int()),
  visitsDropped: z.number().check(z.int()),
  distanceMeters: z.number(),
  durationMinutes: z.number(),
  planningDay: z.string().check(clientText, z.describe("Y-m-d the `H:i` visit windows referred to.")),
  timeZone: z.string().check(clientText, z.describe("Zone of every wall-clock time of the result (the hub's, else the application's).")),
  endedBy: z.optional(
    z
      .enum(routingEnds)
      .check(
        z.describe(
          "How the optimizer's search ended: earlyStop (it had stopped improving), budget (the profile's time limit), deadline (the worker's own time was running out; the best plan so far) or threadFailure (a search thread failed; the best plan the searches reached). Absent on results stored without it.",
        ),
      ),
  ),
  droppedByReason: z.optional(
    z
      .partialRecord(z.enum(dropReasonCodes), z.number().check(z.int()))
      .check(z.describe("Dropped visits per reasonCode (codes with none left out). Absent on results stored before reason codes.")),
  ),
  explanationCut: z.optional(
    z
      .boolean()
      .check(
        z.describe(
          "True when the explanation of the visits the search dropped reached its hard time cap (a large day with many drops): the visits it did not reach have reasonCode unexplained. Absent on results stored before the cap.",
        ),
      ),
  ),
  travel: z
    .optional(travelReportSchema)
    .check(z.describe("The run's travel source and matrix figures (absent on results stored before travel providers).")),
});

export const resultDispatchSchema = z.object({
  dispatchedTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC, of the last dispatch.")),
  vehicleIds: z.array(z.string().check(clientText)).check(z.describe("Vehicles dispatched so far (every dispatch of this result).")),
  dispatchId: z.optional(
    z
      .string()
      .check(
        clientText,
        z.describe("Identity of the last dispatch: the `routing.result.dispatched` event of each dispatch derives its id from it."),
      ),
  ),
  lastVehicleIds: z.optional(
    z.array(z.string().check(clientText)).check(z.describe("Vehicles of the last dispatch (the ones its event names).")),
  ),
  success: z.number().check(z.int(), z.describe("Visits assigned by the last dispatch.")),
  failed: z
    .number()
    .check(z.int(), z.describe("Visits of the last dispatch that were no longer active (deleted, or status changed since the run).")),
});

/** How a re-optimization plans the live day (POST /routing/result/{resultId}/reoptimize); stored on its result for the run. */
const reoptimizeShape = {
  assigned: z._default(
    z
      .enum(["keepVehicle", "free"])
      .check(
        z.describe(
          "keepVehicle: still-ASSIGNED visits stay on their vehicle (re-sequenced, not moved). free: only loaded ones stay (a vehicle that has left the hub — a visit of its route started, arrived, done or failed — keeps its visits except pickups and deliveries whose pickup is not DONE); the others go back to the pool and may move to any vehicle or be dropped. Committed stops (EN_ROUTE, ARRIVED) are the vehicles' starts either way.",
        ),
      ),
    "keepVehicle",
  ),
  releaseVehicleIds: z._default(
    z.array(z.string().check(clientText, z.minLength(1), z.maxLength(64))).check(
      z.maxLength(500),
      z.refine((ids) => new Set(ids).size === ids.length, { message: "releaseVehicleIds must be distinct" }),
      z.describe(
        "Vehicles whose still-ASSIGNED visits all go back to the pool (a breakdown, a driver sent home early); the vehicle itself stays available unless its shift has ended.",
      ),
    ),
    [],
  ),
  includeNewVisits: z._default(
    z
      .boolean()
      .check(
        z.describe(
          "true: the hub's active visits (UNASSIGNED, ONGOING) join the plan. false: only the parent result's visits (its routes and dropped visits) that are active or released.",
        ),
      ),
    true,
  ),
  useIdleVehicles: z._default(
    z
      .boolean()
      .check(
        z.describe(
          "true: profile vehicles with no dispatched route in their shift may take work. false: only vehicles already on the road are planned.",
        ),
      ),
    true,
  ),
  timeLimitSeconds: z.optional(
    storableNumber().check(
      z.int(),
      z.minimum(1),
      z.maximum(240),
      z.describe(
        "Optimizer budget of this run; default the profile's timeLimitSeconds. Counts against the run-seconds quota as that would.",
      ),
    ),
  ),
  autoDispatch: z._default(
    z
      .boolean()
      .check(z.describe("true: the run dispatches its result when done, as a schedule's autoDispatch does (result.dispatch records it).")),
    false,
  ),
};

export const reoptimizeOptionsSchema = z.object(reoptimizeShape);
export type ReoptimizeOptions = z.infer<typeof reoptimizeOptionsSchema>;

/** What the result item stores (without the body, which lives in S3: routes and dropped visits of 1,500 visits exceed an item). */
export const resultRecordSchema = z.object({
  _id: idSchema,
  name: z.string().check(clientText),
  hubId: z.string().check(clientText),
  configurationId: z.string().check(clientText),
  scheduleId: z.nullable(z.string().check(clientText)).check(z.describe("The schedule whose run created it; null for on-demand results.")),
  createdFrom: z.enum(resultOrigins),
  parentResultId: z._default(
    z
      .nullable(z.string().check(clientText))
      .check(z.describe("REOPTIMIZE results: the result whose live day was re-planned; null otherwise.")),
    null,
  ),
  reoptimize: z.optional(
    reoptimizeOptionsSchema.check(z.describe("REOPTIMIZE results: the options the re-optimization was asked with (defaults filled in).")),
  ),
  status: z.enum(resultStatuses).check(z.describe("ongoing while the optimizer runs, then done or failed.")),
  message: z.nullable(z.string().check(clientText)).check(z.describe("Why the run failed; null otherwise.")),
  summary: z.nullable(resultSummarySchema).check(z.describe("Null until done.")),
  dispatch: z.nullable(resultDispatchSchema).check(z.describe("Null until dispatched.")),
  runTime: z.string().check(clientText, z.describe("Planning instant (routes start no earlier), Y-m-d H:i:s UTC.")),
  organizationId: z.string().check(clientText),
  createdBy: z.string().check(clientText, z.describe("User id, or `scheduler`.")),
  createdTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
  updatedTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
  finishedTime: z.nullable(z.string().check(clientText)).check(z.describe("When it became done or failed, Y-m-d H:i:s UTC.")),
});
export type RoutingResultRecord = z.infer<typeof resultRecordSchema>;

export const resultBodySchema = z.object({ routes: z.array(resultRouteSchema), dropped: z.array(resultDroppedSchema) });
export type RoutingResultBody = z.infer<typeof resultBodySchema>;

/** GET /routing/result/{id}: the record with its routes and dropped visits (empty until done). */
export const routingResultSchema = z.extend(resultRecordSchema, resultBodySchema.shape);
export type RoutingResult = z.infer<typeof routingResultSchema>;

export const resultParamsSchema = z.strictObject({ resultId: z.string().check(clientText, z.minLength(1), z.maxLength(64)) });

/** GET /routing/result/{id}: the JSON envelope (default) or the routes as GeoJSON (RFC 7946). Other query keys are ignored, as before. */
export const resultGetQuerySchema = z.object({
  format: z
    .optional(z.enum(["json", "geojson"]))
    .check(
      z.describe("`geojson`: answer the routes as an RFC 7946 FeatureCollection (application/geo+json) instead of the JSON envelope."),
    ),
});

export const resultListQuerySchema = pageQuery({
  hubId: z.optional(z.string().check(clientText, z.minLength(1), z.maxLength(64))).check(z.describe("Results of this hub only.")),
  createdFrom: z.optional(z.enum(resultOrigins)).check(z.describe("SCHEDULER (schedule runs) or API (on-demand runs).")),
});
export type ResultListQuery = z.infer<typeof resultListQuerySchema>;

export const resultCreateSchema = z.strictObject({
  configurationId: z
    .string()
    .check(
      clientText,
      z.trim(),
      z.minLength(1),
      z.maxLength(64),
      z.describe("The configuration profile to run: it supplies the hub, vehicles and optimizer settings."),
    ),
  name: z
    .optional(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(200)))
    .check(z.describe("Default: `{profile name} - {Y-m-d H:i}` (application time zone).")),
});
export type ResultCreateInput = z.infer<typeof resultCreateSchema>;

/** Dispatch takes no body: every vehicle of the result, or the ones named in `vehicleIds`. */
export const resultDispatchQuerySchema = z.strictObject({
  vehicleIds: z
    .optional(
      z
        .pipe(
          z.string().check(clientText, z.minLength(1), z.maxLength(4000)),
          z.transform((text: string) => text.split(",").map((id) => id.trim())),
        )
        .check(
          z.refine((ids) => ids.every((id) => id.length > 0) && new Set(ids).size === ids.length, {
            message: "vehicleIds must be distinct, comma-separated vehicle ids",
          }),
        ),
    )
    .check(z.describe("Comma-separated ids of the result's vehicles to dispatch; absent = every vehicle of the result.")),
});
export type ResultDispatchQuery = z.infer<typeof resultDispatchQuerySchema>;

export const dispatchOutcomeSchema = z.object({
  success: z.number().check(z.int(), z.describe("Visits assigned (status ASSIGNED, with vehicle, order, eta, etd and this result's id).")),
  failed: z.number().check(z.int(), z.describe("Visits no longer active (deleted, or not UNASSIGNED/ONGOING any more): left unchanged.")),
  unassigned: z.optional(
    z
      .number()
      .check(
        z.int(),
        z.describe(
          "A re-plan: visits it released and dropped that were returned to UNASSIGNED (still ASSIGNED under the result the run read).",
        ),
      ),
  ),
});
export type DispatchOutcome = z.infer<typeof dispatchOutcomeSchema>;

/** POST /routing/result/{resultId}/reoptimize. */
export const resultReoptimizeSchema = z.strictObject({
  ...reoptimizeShape,
  name: z.optional(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(200))),
});
export type ResultReoptimizeInput = z.infer<typeof resultReoptimizeSchema>;

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("RoutingResult", routingResultSchema);
component("RoutingResultSummary", resultRecordSchema);
component("RoutingResultInput", resultCreateSchema);
component("RoutingRoute", resultRouteSchema);
component("DispatchOutcome", dispatchOutcomeSchema);
