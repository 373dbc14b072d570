import { resultReoptimizeSchema } from "#shared/domain/routing-results/schema";
import { pageBodySchema, successBodySchema } from "#shared/domain/schemas";
import {
  dispatchOutcomeSchema,
  resultCreateSchema,
  resultDispatchQuerySchema,
  resultGetQuerySchema,
  resultListQuerySchema,
  resultParamsSchema,
  resultRecordSchema,
  routingResultSchema,
} from "#shared/domain/routing-results/schema";
import { resultGeoJsonSchema } from "#shared/domain/routing-results/geojson";
import { defineRoute } from "#shared/http/route";

const tag = "Routing results";

export const routingResultRoutes = {
  list: defineRoute({
    operationId: "listRoutingResults",
    method: "GET",
    path: "/routing/results",
    handler: "functions/http/routing-results/list.ts",
    summary: "List routing results",
    description: [
      "The organization's routing results, newest first, optionally only those of `hubId` and/or `createdFrom` (SCHEDULER: created by a routing schedule run; API: created on demand).",
      "List entries carry the metadata, status and summary but not the routes and dropped visits (up to 1,500 visits each): read one result for those.",
      "A token restricted to hubs sees the results of those hubs only; a `hubId` it does not allow is a 400.",
    ].join("\n\n"),
    tag,
    permission: "view/routing-result",
    query: resultListQuerySchema,
    responses: () => ({ 200: { description: "A page of routing results", schema: pageBodySchema(resultRecordSchema) } }),
    grants: ["tableRead"],
  }),
  get: defineRoute({
    operationId: "getRoutingResult",
    method: "GET",
    path: "/routing/result/{resultId}",
    handler: "functions/http/routing-results/get.ts",
    summary: "Read a routing result",
    description: [
      "The result with its routes (per vehicle: totals and the ordered trips with eta, etd, waiting and distance) and its dropped visits with the reason.",
      "`routes` and `dropped` are empty while the result is `ongoing` or `failed` (`message` then says why). Times are `Y-m-d H:i` in `summary.timeZone` (the hub's zone, else the application's); distances in metres.",
      "`?format=geojson` answers the same result as GeoJSON (RFC 7946, `application/geo+json`) for map tools: the hub as a Point, each vehicle's route as a LineString (hub → stops, → hub when it returns) with `stroke` colour, a Point per stop with `order`, `eta` and `etd`, and a Feature per unassigned visit (`geometry: null` when its position is unknown). Positions are `[longitude, latitude]`.",
      'Once the result is dispatched, each stop also carries its visit\'s live `status`, `projectedEta`/`projectedEtd`, `slackMinutes` and `risk`, and each vehicle still driving the result its latest position reported since the dispatch (`kind: "vehicle"`, `fresh` under 5 minutes old).',
    ].join("\n\n"),
    tag,
    permission: "view/routing-result",
    params: resultParamsSchema,
    query: resultGetQuerySchema,
    responses: () => ({
      200: {
        description:
          "The routing result (application/json), or with `?format=geojson` its GeoJSON FeatureCollection (application/geo+json)",
        schema: successBodySchema(routingResultSchema),
        alternatives: { "application/geo+json": resultGeoJsonSchema },
      },
    }),
    grants: ["tableRead", "bucketRead"],
  }),
  create: defineRoute({
    operationId: "createRoutingResult",
    method: "POST",
    path: "/routing/result",
    handler: "functions/http/routing-results/create.ts",
    summary: "Run the optimizer on demand for a configuration profile",
    description: [
      "Creates a result with `createdFrom: API` and `status: ongoing` and queues the run; the run worker reads the profile (hub, vehicles, settings) and the hub's active visits (oldest first, at most 1,500), plans from the moment it runs, and sets the result `done` (or `failed` with the reason). Poll GET /routing/result/{resultId}.",
      "The run is not done inside this call (the optimizer may use up to the profile's `timeLimitSeconds`). A hub without active visits or vehicles ends `failed` with the reason. On-demand results are not dispatched automatically: use POST /routing/result/{resultId}/dispatch.",
      "`configurationId` must name a profile of the organization (and of a hub the token allows): 400 otherwise.",
      "An organization may have at most its plan's `maxRunsQueued` runs (without a tenant record: `MAX_ACTIVE_RUNS_PER_ORG`, default 5), scheduled and on demand, queued or running: one more answers 429 (`run-429`).",
      "A run whose time budget (the profile's `timeLimitSeconds`) no longer fits in the plan's monthly run-seconds quota answers 429 (`run-quota-429`) with the quota and when it resets (the first instant of the next UTC month).",
    ].join("\n\n"),
    tag,
    permission: "add/routing-result",
    body: resultCreateSchema,
    responses: () => ({
      201: { description: "Created (ongoing)", schema: successBodySchema(routingResultSchema) },
      429: {
        description:
          "The organization already has its plan's maxRunsQueued (MAX_ACTIVE_RUNS_PER_ORG, default 5, without a tenant record) routing runs queued or running (failedCode run-429), or the plan's monthly run-seconds quota has no room for this run (failedCode run-quota-429); nothing was created or queued.",
        failedCodes: ["run-429", "run-quota-429"],
      },
    }),
    grants: ["tableWrite", "queueSend"],
    idempotent: true,
  }),
  dispatch: defineRoute({
    operationId: "dispatchRoutingResult",
    method: "POST",
    path: "/routing/result/{resultId}/dispatch",
    handler: "functions/http/routing-results/dispatch.ts",
    summary: "Dispatch a routing result",
    description: [
      "Assigns every visit on the routes of the result (or of the vehicles named in `vehicleIds`): status ASSIGNED with `assignedVehicleId`, `routePlannedOrder`, `eta`, `etd` and `routingResultId`. No request body.",
      "Each visit is updated only if it is still UNASSIGNED or ONGOING; visits deleted or moved on since the run are left unchanged and counted in `failed`. Dispatching again counts the visits this result already assigned in `success` (a visit another result took counts in `failed`).",
      "The result's `dispatch` keeps the counts and `lastVehicleIds` of the last dispatch and, in `vehicleIds`, every vehicle dispatched so far (concurrent dispatches included); each dispatch sends one `routing.result.dispatched` event naming its own vehicles.",
      "Only a `done` result can be dispatched (409 otherwise). A vehicle id not on the result is a 400 naming `vehicleIds`.",
    ].join("\n\n"),
    tag,
    permission: "edit/routing-result",
    params: resultParamsSchema,
    query: resultDispatchQuerySchema,
    responses: () => ({
      200: { description: "Dispatch counts", schema: successBodySchema(dispatchOutcomeSchema) },
      409: { description: "The result cannot be dispatched in its state (failedCode sys-409).", failedCodes: ["sys-409"] },
    }),
    grants: ["tableWrite", "bucketRead"],
    idempotent: true,
  }),
  map: defineRoute({
    operationId: "getRoutingResultMap",
    method: "GET",
    path: "/routing/result/{resultId}/map.svg",
    handler: "functions/http/routing-results/map.ts",
    summary: "Picture of a routing result (SVG)",
    description: [
      "A self-contained SVG (no map tiles, nothing fetched): the hub, each vehicle's route in its own colour with the stop order (dashed: the drive back to the hub), the unassigned visits marked ×, scaled to what is drawn, with a scale bar and a legend. Hover a stop for its visit, eta and etd.",
      "Same permission and visibility as reading the result. A result that is `ongoing` or `failed` shows only its hub. A hub or unassigned visit deleted since the run is left off (and counted in the legend).",
      "Once the result is dispatched, the map shows the day: done stops hollow, failed ones with a red ×, open stops projected late ringed, each vehicle's latest position (a diamond, faded when over 5 minutes old), and the side table the projected ETA and status beside the planned ETA.",
    ].join("\n\n"),
    tag,
    permission: "view/routing-result",
    params: resultParamsSchema,
    responses: () => ({ 200: { description: "SVG picture", contentType: "image/svg+xml" } }),
    grants: ["tableRead", "bucketRead"],
  }),
  reoptimize: defineRoute({
    operationId: "reoptimizeRoutingResult",
    method: "POST",
    path: "/routing/result/{resultId}/reoptimize",
    handler: "functions/http/routing-results/reoptimize.ts",
    summary: "Re-plan a dispatched day",
    description: [
      "Creates a result with `createdFrom: REOPTIMIZE`, `parentResultId`, the options (`reoptimize`) and `status: ongoing` and queues its run, like POST /routing/result with the parent's profile. The run plans around what is on the road: a vehicle's EN_ROUTE/ARRIVED stop (else its last finished one) is its start, its still-ASSIGNED visits stay on it (`assigned: keepVehicle`; re-sequenced, not moved) unless released (`assigned: free` releases those not loaded; `releaseVehicleIds` all of those vehicles'), a vehicle whose shift ended is left out, and the hub's active visits join (`includeNewVisits`). The run starts from the routes being driven (a warm start), so its plan is never worse than carrying on. Dispatch it with POST /routing/result/{resultId}/dispatch (or `autoDispatch`): a kept or released visit is updated only while it is still under the result the run read, and released visits the re-plan dropped go back to UNASSIGNED.",
      "Only a done, dispatched result can be re-optimized (409 sys-409). One re-optimization per hub at a time: another while one is queued or running answers 409 `reopt-409` naming it. The run counts against the run caps (429 run-429 / run-quota-429).",
    ].join("\n\n"),
    tag,
    permission: "add/routing-result",
    params: resultParamsSchema,
    body: resultReoptimizeSchema,
    responses: () => ({
      201: { description: "Created (ongoing)", schema: successBodySchema(routingResultSchema) },
      409: {
        description: "The result is not done and dispatched (sys-409), or the hub has a re-optimization in progress (reopt-409).",
        failedCodes: ["sys-409", "reopt-409"],
      },
      429: {
        description: "The run caps (run-429, run-quota-429); nothing was created or queued.",
        failedCodes: ["run-429", "run-quota-429"],
      },
    }),
    grants: ["tableWrite", "queueSend"],
    idempotent: true,
  }),
};
