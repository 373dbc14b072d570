import * as z from "zod/mini";
import { pageBodySchema, successBodySchema, clientText } from "#shared/domain/schemas";
import {
  vehicleInputSchema,
  vehicleListQuerySchema,
  vehicleParamsSchema,
  vehiclePatchSchema,
  vehicleViewSchema,
} from "#shared/domain/vehicles/schema";
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
};
