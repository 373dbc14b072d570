import * as z from "zod/mini";
import { pageBodySchema, successBodySchema, clientText } from "#shared/domain/schemas";
import { VISIT_BATCH_MAX, visitBatchResultSchema, visitBatchSchema } from "#shared/domain/visits/batch";
import {
  visitCreateSchema,
  visitHistoryQuerySchema,
  visitListQuerySchema,
  visitParamsSchema,
  visitPatchSchema,
  visitProgressSchema,
  visitSchema,
  visitTransitionSchema,
} from "#shared/domain/visits/schema";
import { MAX_PROOFS_PER_VISIT, proofDownloadSchema, proofUploadRequestSchema, proofUploadSchema } from "#shared/domain/visits/proofs";
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
    responses: () => ({
      200: { description: "The updated visit", schema: visitBody() },
      409: { description: "A status change the lifecycle does not allow (visit-409).", failedCodes: ["visit-409"] },
    }),
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
  progress: defineRoute({
    operationId: "reportVisitProgress",
    method: "POST",
    path: "/visit/{visitId}/progress",
    handler: "functions/http/visits/progress.ts",
    summary: "Report a driver's progress on a visit",
    description: [
      "One driver action: `start` (ASSIGNED → EN_ROUTE), `undo` (EN_ROUTE → ASSIGNED), `arrive` (ASSIGNED/EN_ROUTE → ARRIVED), `complete` (→ DONE) or `fail` (→ FAILED, with `failureReason`). A move the lifecycle does not allow answers 409 `visit-409` naming `from`, `to` and `allowed`, and changes nothing; a vehicle is heading to or at one visit at a time (409 `visit-411`).",
      "The caller must be the `assignee` of the visit's vehicle, or hold `edit/visit` (a dispatcher acting for the driver); anyone else 403 `visit-403`. `at` (default now) must be within the last 24 h and at most 60 s ahead.",
      "An `Idempotency-Key` is kept 72 hours, so a driver app may replay its offline queue; `If-Match` makes the action conditional on the version read. Each change is stored with its time, source, user and position and appended to the visit's history.",
      `Proof of delivery: \`proofIds\` name proofs uploaded through POST /visit/{visitId}/proofs; each must have been uploaded for this visit (400 on \`proofIds\` otherwise); they are recorded on the visit (at most ${MAX_PROOFS_PER_VISIT}) and on the change. \`complete\` with a requirement of the visit unmet is a 400 naming it (\`requirements.photo\`, \`requirements.signature\`, \`requirements.notes\`), and changes nothing.`,
    ].join("\n\n"),
    tag,
    permission: "edit/visit-progress",
    params: visitParamsSchema,
    body: visitProgressSchema,
    responses: () => ({
      200: { description: "The visit after the action", schema: visitBody() },
      403: { description: "Not the driver of the visit's vehicle (visit-403).", failedCodes: ["visit-403"] },
      409: {
        description: "The lifecycle does not allow this move (visit-409), or the vehicle is busy with another visit (visit-411).",
        failedCodes: ["visit-409", "visit-411"],
      },
    }),
    // proofCheck: HeadObject of each named proof (docs/api/execution.md, "Proof of delivery").
    grants: ["tableWrite", "proofCheck"],
    idempotent: true,
    idempotencyWindowSeconds: 72 * 60 * 60,
    versioned: true,
  }),
  proofUpload: defineRoute({
    operationId: "createVisitProofUpload",
    method: "POST",
    path: "/visit/{visitId}/proofs",
    handler: "functions/http/visits/proof-upload.ts",
    summary: "Get an upload form for a proof of delivery",
    description: [
      "Answers a `proofId` and a presigned S3 POST (`url` and form `fields`) for one photo, signature or document of the visit: POST the file as a multipart/form-data form, the `fields` as given and then the file as `file`, before it expires (`PRESIGN_TTL_SECONDS`, 15 minutes by default). The form's policy fixes the key (under the organization and the visit), the Content-Type and the kind, and takes 1 byte up to the declared `sizeBytes` (at most 10 MB); S3 refuses anything else with a 403. The API never carries the file.",
      "Uploading records nothing: name the `proofId` in `proofIds` of POST /visit/{visitId}/progress (e.g. with `complete`). Same caller rule as progress: the driver of the visit's vehicle, or a holder of `edit/visit` (403 `visit-403`). With an `Idempotency-Key` (kept 72 hours) a replay answers the same proofId with a freshly signed form.",
    ].join("\n\n"),
    tag,
    permission: "edit/visit-progress",
    params: visitParamsSchema,
    body: proofUploadRequestSchema,
    responses: () => ({
      201: { description: "Where to upload the proof", schema: successBodySchema(proofUploadSchema) },
      403: { description: "Not the driver of the visit's vehicle (visit-403).", failedCodes: ["visit-403"] },
    }),
    // tableRead: the visit and its vehicle's driver; proofUpload: the signed form may put only proofs.
    // tableWrite: the Idempotency-Key record is stored in the table.
    grants: ["tableWrite", "proofUpload"],
    idempotent: true,
    idempotencyWindowSeconds: 72 * 60 * 60,
  }),
  proofs: defineRoute({
    operationId: "listVisitProofs",
    method: "GET",
    path: "/visit/{visitId}/proofs",
    handler: "functions/http/visits/proofs.ts",
    summary: "A visit's proofs of delivery, with download URLs",
    description: `The proofs recorded on the visit (named by the driver's progress actions, at most ${MAX_PROOFS_PER_VISIT}), oldest first, each with a presigned GET \`url\` valid for \`expiresInSeconds\` (5 minutes): ask again for fresh ones. A proof past the bucket's retention (docs/api/execution.md) is listed but its URL answers 404.`,
    tag,
    permission: "view/visit",
    params: visitParamsSchema,
    responses: () => ({ 200: { description: "The visit's proofs", schema: successBodySchema(z.array(proofDownloadSchema)) } }),
    // proofRead: presigning a GET needs the right to get the object (signed locally, no S3 call).
    grants: ["tableRead", "proofRead"],
  }),
  history: defineRoute({
    operationId: "listVisitHistory",
    method: "GET",
    path: "/visit/{visitId}/history",
    handler: "functions/http/visits/history.ts",
    summary: "A visit's status changes",
    description:
      "Oldest first: each change's from/to, time, source (driver, dispatcher, system, geofence), user, position and failure reason. Kept as long as the visit.",
    tag,
    permission: "view/visit",
    params: visitParamsSchema,
    query: visitHistoryQuerySchema,
    responses: () => ({ 200: { description: "A page of status changes", schema: pageBodySchema(visitTransitionSchema) } }),
    grants: ["tableRead"],
  }),
};
