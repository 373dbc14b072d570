import type { RouteDefinition } from "#shared/http/route";
import { appIntegrationRoutes } from "./http/app-integrations/routes.ts";
import { recordRoutes } from "./http/data/routes.ts";
import { dataTypeRoutes } from "./http/data-types/routes.ts";
import { hubRoutes } from "./http/hubs/routes.ts";
import { openApiRoutes } from "./http/openapi/routes.ts";
import { configurationRoutes } from "./http/routing-configurations/routes.ts";
import { routingResultRoutes } from "./http/routing-results/routes.ts";
import { scheduleRoutes } from "./http/routing-schedules/routes.ts";
import { vehicleRoutes } from "./http/vehicles/routes.ts";
import { extensionRoutes } from "./http/extensions/routes.ts";
import { visitRoutes } from "./http/visits/routes.ts";
import { usageRoutes } from "./http/usage/routes.ts";
import { webhookRoutes } from "./http/webhooks/routes.ts";

/**
 * The route table: the only list of endpoints. infra/ creates one function and REST method per
 * entry, local/gateway.ts dispatches by it, and GET /v3/openapi.json is generated from it.
 * Each area keeps its entries in functions/http/<area>/routes.ts; add the area here.
 */
export const routes: readonly RouteDefinition[] = [
  ...Object.values(openApiRoutes),
  ...Object.values(vehicleRoutes),
  ...Object.values(scheduleRoutes),
  ...Object.values(appIntegrationRoutes),
  ...Object.values(dataTypeRoutes),
  ...Object.values(recordRoutes),
  ...Object.values(hubRoutes),
  ...Object.values(visitRoutes),
  ...Object.values(configurationRoutes),
  ...Object.values(routingResultRoutes),
  ...Object.values(usageRoutes),
  ...Object.values(extensionRoutes),
  ...Object.values(webhookRoutes),
];

/** Every permission slug some route requires (the token CLI's `--permissions all`). */
export const permissionSlugs: readonly string[] = [...new Set(routes.flatMap((route) => (route.permission ? [route.permission] : [])))];

export const apiDescription = [
  "Field operations for one organization per token: data types, data source records, routing schedules, vehicles and app integration.",
  "",
  "Conventions: bearer JWT on every endpoint but this document and its page GET /docs, listing the operation's permission slug (`x-permission`; 403 failedCode sys-035 without it); errors are `{ status: false, message, failedCode }` (400 adds `errors`, one entry per field and rule);",
  "lists take `limit` (1–100, default 20) and an opaque `cursor`, and answer `nextCursor` (null on the last page); another organization's resource is always 404.",
  "Safe retries: creating POSTs, dispatch and on-demand runs take an `Idempotency-Key` header (same key and request within 24 h → the first answer again, `Idempotency-Replayed: true`); single resources answer an `ETag` and their writes take `If-Match` (412 sys-412 on another version).",
].join("\n");
