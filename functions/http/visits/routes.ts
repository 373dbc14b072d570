import * as z from "zod/mini";
import { pageBodySchema, successBodySchema, clientText } from "#shared/domain/schemas";
import { VISIT_BATCH_MAX, visitBatchResultSchema, visitBatchSchema } from "#shared/domain/visits/batch";
import { visitCreateSchema, visitListQuerySchema, visitParamsSchema, visitPatchSchema, visitSchema } from "#shared/domain/visits/schema";
import { defineRoute } from "#shared/http/route";

const visitBody = () => successBodySchema(visitSchema);
const tag = "Visits";

export const visitRoutes = {
  create: defineRoute({
    operationId: "createVisit",
    method: "POST",
    path: "/visit",
    handler: "functions/http/visits/create.ts",
    summary: "Create a visit",
    description: [
      "A stop for a vehicle of the hub. `hubId` must name an existing hub of the organization (and be one of the token's hubIds when it lists any); a hub cannot be deleted while visits name it.",
      '`coordinate` takes `{ lat, lng }` or `"lat,lng"` and is always answered as `{ lat, lng }`. `timeWindows` entries are `H:i` (the day of the run that plans the visit) or `Y-m-d H:i`, both ends in the same form, start before end.',
      "`status` defaults to UNASSIGNED; ASSIGNED and the dispatch fields (`assignedVehicleId`, `routingResultId`, `routePlannedOrder`, `eta`, `etd`) are set only by dispatching a routing result: sent, they are ignored (like `_id`, `organizationId`, `createdTime`, `updatedTime`), so a visit read by GET can be sent back; any other unknown key is a 400.",
    ].join("\n\n"),
    tag,
    permission: "add/visit",
    body: visitCreateSchema,
    responses: () => ({ 201: { description: "Created", schema: visitBody() } }),
    grants: ["tableWrite"],
    idempotent: true,
  }),
  createBatch: defineRoute({
    operationId: "createVisitBatch",
    method: "POST",
    path: "/visits/batch",
    handler: "functions/http/visits/batch-create.ts",
    summary: "Create up to 100 visits in one call",
    description: [
      `\`{ "visits": [ … ] }\`: 1 to ${VISIT_BATCH_MAX} \`POST /visit\` bodies, of one hub or of several. Each is validated and created on its own, exactly as \`POST /visit\` would (same rules, same hub checks, its own write), a few at a time.`,
      "Answers 200 with `data`: one result per item, in the items' order: `{ index, status: 201, data: <the visit> }` or `{ index, status, error }`, where status and error are what `POST /visit` would have answered for that body. An invalid item fails alone: the others are created. Only the envelope (not an object, no `visits` array, 0 or more than 100 items) is a 400 of the whole call, and then nothing is created.",
      "With an `Idempotency-Key`, a repeated call answers the first call's results again and creates nothing. A batch is one API call for the plan's rate and call quota (see docs/api/hubs-visits-configurations.md).",
    ].join("\n\n"),
    tag,
    permission: "add/visit",
    body: visitBatchSchema,
    responses: () => ({
      200: { description: "One result per item, in order", schema: successBodySchema(visitBatchResultSchema(visitSchema)) },
    }),
    grants: ["tableWrite"],
    idempotent: true,
  }),
  list: defineRoute({
    operationId: "listVisits",
    method: "GET",
    path: "/visits",
    handler: "functions/http/visits/list.ts",
    summary: "List visits",
    description:
      "Oldest first (by creation). Filter by `hubId` and/or `status`; a status filter may leave a page with fewer than `limit` visits (follow nextCursor until it is null). With a token restricted to hubs only those hubs' visits are listed. A cursor belongs to the filter it was returned for.",
    tag,
    permission: "view/visit",
    query: visitListQuerySchema,
    responses: () => ({ 200: { description: "A page of visits", schema: pageBodySchema(visitSchema) } }),
    grants: ["tableRead"],
  }),
  get: defineRoute({
    operationId: "getVisit",
    method: "GET",
    path: "/visit/{visitId}",
    handler: "functions/http/visits/get.ts",
    summary: "Read a visit",
    description: "By id alone: no hubId is needed.",
    tag,
    permission: "view/visit",
    params: visitParamsSchema,
    responses: () => ({ 200: { description: "The visit", schema: visitBody() } }),
    grants: ["tableRead"],
    versioned: true,
  }),
  patch: defineRoute({
    operationId: "patchVisit",
    method: "PATCH",
    path: "/visit/{visitId}",
    handler: "functions/http/visits/patch.ts",
    summary: "Change some fields of a visit",
    description:
      "Top-level fields sent replace the stored ones (nested objects whole; null clears a nullable field); the merged visit is validated as a whole and a rejected patch changes nothing. A new `hubId` moves the visit to that hub. Setting status UNASSIGNED puts the visit back in the pool and clears its dispatch fields; ASSIGNED cannot be set by a client.",
    tag,
    permission: "edit/visit",
    params: visitParamsSchema,
    body: visitPatchSchema,
    responses: () => ({ 200: { description: "The updated visit", schema: visitBody() } }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  remove: defineRoute({
    operationId: "deleteVisit",
    method: "DELETE",
    path: "/visit/{visitId}",
    handler: "functions/http/visits/delete.ts",
    summary: "Delete a visit",
    tag,
    permission: "delete/visit",
    params: visitParamsSchema,
    responses: () => ({
      200: { description: "Deleted", schema: z.object({ status: z.literal(true), message: z.string().check(clientText) }) },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
};
