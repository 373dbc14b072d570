import * as z from "zod/mini";
import { pageBodySchema, successBodySchema, clientText } from "#shared/domain/schemas";
import {
  vehicleInputSchema,
  vehicleListQuerySchema,
  vehicleParamsSchema,
  vehiclePatchSchema,
  vehicleViewSchema,
} from "#shared/domain/vehicles/schema";
import {
  latestPositionsGeoJsonSchema,
  latestPositionsQuerySchema,
  POSITION_BATCH_MAX,
  POSITION_FORBIDDEN_CODE,
  POSITION_HISTORY_DAYS,
  POSITION_QUOTA_CODE,
  POSITION_RATE,
  POSITION_RATE_CODE,
  positionBatchResultSchema,
  positionBatchSchema,
  positionHistoryQuerySchema,
  positionTrackGeoJsonSchema,
  vehicleLatestPositionSchema,
  vehiclePositionSchema,
} from "#shared/domain/vehicles/positions";
import { defineRoute } from "#shared/http/route";
import { liveRouteViewSchema } from "#shared/domain/live/schema";

const vehicleBody = () => successBodySchema(vehicleViewSchema);
const tag = "Vehicles";

export const vehicleRoutes = {
  create: defineRoute({
    operationId: "createVehicle",
    method: "POST",
    path: "/vehicle",
    handler: "functions/http/vehicles/create.ts",
    summary: "Create a vehicle",
    description:
      "hubId must name an existing hub of the organization (400 otherwise) and be one of the caller's hubIds when the token lists any. The hub counts the vehicle as a reference, so it cannot be deleted while the vehicle exists.",
    tag,
    permission: "add/vehicle",
    body: vehicleInputSchema,
    responses: () => ({
      201: { description: "Created", schema: vehicleBody() },
      409: {
        description: "A unique custom value is taken (ext-001), or the extension type changed meanwhile (data-003, retry).",
        failedCodes: ["ext-001", "data-003"],
      },
    }),
    grants: ["tableWrite"],
    idempotent: true,
  }),
  list: defineRoute({
    operationId: "listVehicles",
    method: "GET",
    path: "/vehicles",
    handler: "functions/http/vehicles/list.ts",
    summary: "List vehicles",
    description:
      "Filter by hubId and/or tag. Pages hold at most `limit` items; with a tag filter a page may hold fewer (the filter applies after the page is read), follow nextCursor until it is null.",
    tag,
    permission: "view/vehicle",
    query: vehicleListQuerySchema,
    responses: () => ({ 200: { description: "A page of vehicles", schema: pageBodySchema(vehicleViewSchema) } }),
    grants: ["tableRead"],
  }),
  get: defineRoute({
    operationId: "getVehicle",
    method: "GET",
    path: "/vehicle/{vehicleId}",
    handler: "functions/http/vehicles/get.ts",
    summary: "Read a vehicle",
    tag,
    permission: "view/vehicle",
    params: vehicleParamsSchema,
    responses: () => ({ 200: { description: "The vehicle", schema: vehicleBody() } }),
    grants: ["tableRead"],
    versioned: true,
  }),
  replace: defineRoute({
    operationId: "replaceVehicle",
    method: "PUT",
    path: "/vehicle/{vehicleId}",
    handler: "functions/http/vehicles/replace.ts",
    summary: "Replace a vehicle",
    description: "Full replace: omitted optional fields take their defaults.",
    tag,
    permission: "edit/vehicle",
    params: vehicleParamsSchema,
    body: vehicleInputSchema,
    responses: () => ({
      200: { description: "The updated vehicle", schema: vehicleBody() },
      409: {
        description: "A unique custom value is taken (ext-001), or the extension type changed meanwhile (data-003, retry).",
        failedCodes: ["ext-001", "data-003"],
      },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  patch: defineRoute({
    operationId: "patchVehicle",
    method: "PATCH",
    path: "/vehicle/{vehicleId}",
    handler: "functions/http/vehicles/patch.ts",
    summary: "Change some fields of a vehicle",
    description:
      "Top-level fields sent replace the stored ones (nested objects such as capacity are replaced whole; null clears a nullable field). The merged vehicle is validated as a whole; a rejected patch changes nothing.",
    tag,
    permission: "edit/vehicle",
    params: vehicleParamsSchema,
    body: vehiclePatchSchema,
    responses: () => ({
      200: { description: "The updated vehicle", schema: vehicleBody() },
      409: {
        description: "A unique custom value is taken (ext-001), or the extension type changed meanwhile (data-003, retry).",
        failedCodes: ["ext-001", "data-003"],
      },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  remove: defineRoute({
    operationId: "deleteVehicle",
    method: "DELETE",
    path: "/vehicle/{vehicleId}",
    handler: "functions/http/vehicles/delete.ts",
    summary: "Retire (delete) a vehicle",
    tag,
    permission: "delete/vehicle",
    params: vehicleParamsSchema,
    responses: () => ({
      200: { description: "Deleted", schema: z.object({ status: z.literal(true), message: z.string().check(clientText) }) },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  liveRoute: defineRoute({
    operationId: "getVehicleLiveRoute",
    method: "GET",
    path: "/vehicle/{vehicleId}/route",
    handler: "functions/http/vehicles/live-route.ts",
    summary: "The vehicle's live route with projected ETAs",
    description:
      "The visits the vehicle's last dispatch gave it, in order, each with its planned and projected arrival, slack and risk, projected from the driver's progress on the run's own travel times (docs/api/execution.md, Live route and ETAs). A vehicle never dispatched answers no stops.",
    tag,
    permission: "view/vehicle",
    params: vehicleParamsSchema,
    responses: () => ({ 200: { description: "The live route", schema: successBodySchema(liveRouteViewSchema) } }),
    grants: ["tableRead"],
  }),
  addPositions: defineRoute({
    operationId: "addVehiclePositions",
    method: "POST",
    path: "/vehicle/{vehicleId}/positions",
    handler: "functions/http/vehicles/add-positions.ts",
    summary: "Report a vehicle's positions",
    description: [
      `\`{ "positions": [{ "at", "lat", "lng", "accuracyM"?, "speedKmh"?, "headingDeg"? }] }\`: 1 to ${POSITION_BATCH_MAX} samples, each \`at\` within the last 24 h and at most 60 s ahead (400 naming each sample out of range; nothing is stored).`,
      "Answers 202 `{ accepted, duplicates, stale }` (they add up to the samples sent): a sample is identified by its `at` (to the millisecond), so a sample sent again is a duplicate and changes nothing; a new sample older than the vehicle's latest position is `stale`: kept in the history, the latest stays. The newest accepted sample becomes the vehicle's latest position (GET /vehicles/positions).",
      `The caller must be the vehicle's \`assignee\`, or hold \`edit/vehicle\`; anyone else 403 \`${POSITION_FORBIDDEN_CODE}\`. At most ${POSITION_RATE.requests} reports per vehicle per ${POSITION_RATE.windowSeconds} s (429 \`${POSITION_RATE_CODE}\` with Retry-After); samples count against the plan's \`positionSamplesPerMonth\` (429 \`${POSITION_QUOTA_CODE}\`). The history is kept ${POSITION_HISTORY_DAYS} days.`,
      "A report that moves the latest position drives the vehicle's live route (docs/api/execution.md, \"Refresh on positions\"): with the profile's `autoArrival`, two consecutive slow samples within `arrivalRadiusMeters` of the next stop arrive it (source `geofence`, event `visit.arrived`); otherwise, at most once a minute per vehicle, the route is re-projected from the new position (`visit.eta.changed`, `visit.risk.changed`).",
    ].join("\n\n"),
    tag,
    permission: "add/vehicle-position",
    params: vehicleParamsSchema,
    body: positionBatchSchema,
    responses: () => ({
      202: { description: "Stored: how many samples were new, repeated and stale", schema: successBodySchema(positionBatchResultSchema) },
      403: { description: `Not the vehicle's driver (${POSITION_FORBIDDEN_CODE}).`, failedCodes: [POSITION_FORBIDDEN_CODE] },
      429: {
        description: `The vehicle reports too often (${POSITION_RATE_CODE}, see Retry-After), or the month's position samples are used up (${POSITION_QUOTA_CODE}).`,
        failedCodes: [POSITION_RATE_CODE, POSITION_QUOTA_CODE],
      },
    }),
    grants: ["tableWrite", "positionHistoryWrite"],
  }),
  positions: defineRoute({
    operationId: "listVehiclePositions",
    method: "GET",
    path: "/vehicle/{vehicleId}/positions",
    handler: "functions/http/vehicles/positions.ts",
    summary: "A vehicle's position history",
    description: [
      `Samples between \`from\` and \`to\` (inclusive; default the 24 h before \`to\`, \`to\` default now), oldest first, paginated with \`limit\`/\`cursor\`. Kept ${POSITION_HISTORY_DAYS} days.`,
      "`?format=geojson` answers the page as one GeoJSON Feature (application/geo+json): a LineString of `[longitude, latitude]` (`geometry: null` with fewer than two samples), the samples' times and `nextCursor` in its properties.",
    ].join("\n\n"),
    tag,
    permission: "view/vehicle",
    params: vehicleParamsSchema,
    query: positionHistoryQuerySchema,
    responses: () => ({
      200: {
        description: "A page of samples (application/json), or with `?format=geojson` a LineString Feature (application/geo+json)",
        schema: pageBodySchema(vehiclePositionSchema),
        alternatives: { "application/geo+json": positionTrackGeoJsonSchema },
      },
    }),
    grants: ["tableRead"],
  }),
  latestPositions: defineRoute({
    operationId: "listLatestVehiclePositions",
    method: "GET",
    path: "/vehicles/positions",
    handler: "functions/http/vehicles/latest-positions.ts",
    summary: "The latest position of each vehicle",
    description: [
      "A page of vehicles (filter by `hubId`; a hub-limited token sees its hubs' vehicles) with each one's latest position (`null` until it reports), in the order of GET /vehicles.",
      "`?format=geojson` answers the page as a FeatureCollection of Points (application/geo+json), one per vehicle that has a position, with `nextCursor` beside the features.",
    ].join("\n\n"),
    tag,
    permission: "view/vehicle",
    query: latestPositionsQuerySchema,
    responses: () => ({
      200: {
        description:
          "A page of vehicles with their latest position (application/json), or with `?format=geojson` a FeatureCollection (application/geo+json)",
        schema: pageBodySchema(vehicleLatestPositionSchema),
        alternatives: { "application/geo+json": latestPositionsGeoJsonSchema },
      },
    }),
    grants: ["tableRead"],
  }),
};
