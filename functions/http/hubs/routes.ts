import * as z from "zod/mini";
import { hubInputSchema, hubListQuerySchema, hubParamsSchema, hubPatchSchema, hubViewSchema } from "#shared/domain/hubs/schema";
import { pageBodySchema, successBodySchema, clientText } from "#shared/domain/schemas";
import { defineRoute } from "#shared/http/route";

const hubBody = () => successBodySchema(hubViewSchema);
const tag = "Hubs";
const restriction =
  "A token with `hubIds` sees and changes only those hubs (any other is 404) and cannot create hubs (403, failedCode hub-403).";

export const hubRoutes = {
  create: defineRoute({
    operationId: "createHub",
    method: "POST",
    path: "/hub",
    handler: "functions/http/hubs/create.ts",
    summary: "Create a hub",
    description: `A hub is the depot every route of it starts from and returns to (\`lat\`, \`lng\`). Vehicles, visits and configuration profiles must name an existing hub of the organization.\n\n${restriction}`,
    tag,
    permission: "add/hub",
    body: hubInputSchema,
    responses: () => ({
      201: { description: "Created", schema: hubBody() },
      403: { description: "The token is restricted to some hubs (failedCode hub-403).", failedCodes: ["hub-403"] },
      409: {
        description: "A unique custom value is taken (ext-001), or the extension type changed meanwhile (data-003, retry).",
        failedCodes: ["ext-001", "data-003"],
      },
    }),
    grants: ["tableWrite"],
    idempotent: true,
  }),
  list: defineRoute({
    operationId: "listHubs",
    method: "GET",
    path: "/hubs",
    handler: "functions/http/hubs/list.ts",
    summary: "List hubs",
    description: `Oldest first. ${restriction} With a restricted token a page may hold fewer than \`limit\` hubs; follow nextCursor until it is null.`,
    tag,
    permission: "view/hub",
    query: hubListQuerySchema,
    responses: () => ({ 200: { description: "A page of hubs", schema: pageBodySchema(hubViewSchema) } }),
    grants: ["tableRead"],
  }),
  get: defineRoute({
    operationId: "getHub",
    method: "GET",
    path: "/hub/{hubId}",
    handler: "functions/http/hubs/get.ts",
    summary: "Read a hub",
    tag,
    permission: "view/hub",
    params: hubParamsSchema,
    responses: () => ({ 200: { description: "The hub", schema: hubBody() } }),
    grants: ["tableRead"],
    versioned: true,
  }),
  replace: defineRoute({
    operationId: "replaceHub",
    method: "PUT",
    path: "/hub/{hubId}",
    handler: "functions/http/hubs/replace.ts",
    summary: "Replace a hub",
    description: "Full replace: an omitted timeZone becomes null. What names the hub keeps naming it.",
    tag,
    permission: "edit/hub",
    params: hubParamsSchema,
    body: hubInputSchema,
    responses: () => ({
      200: { description: "The updated hub", schema: hubBody() },
      409: {
        description: "A unique custom value is taken (ext-001), or the extension type changed meanwhile (data-003, retry).",
        failedCodes: ["ext-001", "data-003"],
      },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  patch: defineRoute({
    operationId: "patchHub",
    method: "PATCH",
    path: "/hub/{hubId}",
    handler: "functions/http/hubs/patch.ts",
    summary: "Change some fields of a hub",
    description:
      "Fields sent replace the stored ones (null clears timeZone); the merged hub is validated as a whole and a rejected patch changes nothing.",
    tag,
    permission: "edit/hub",
    params: hubParamsSchema,
    body: hubPatchSchema,
    responses: () => ({
      200: { description: "The updated hub", schema: hubBody() },
      409: {
        description: "A unique custom value is taken (ext-001), or the extension type changed meanwhile (data-003, retry).",
        failedCodes: ["ext-001", "data-003"],
      },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  remove: defineRoute({
    operationId: "deleteHub",
    method: "DELETE",
    path: "/hub/{hubId}",
    handler: "functions/http/hubs/delete.ts",
    summary: "Delete a hub",
    description:
      "Only a hub nothing names: while any vehicle, visit (whatever its status) or configuration profile names it, the answer is 409 (failedCode hub-409) with a message counting each kind. The check and the delete are one conditional write, so a concurrent create in the hub cannot slip past it.",
    tag,
    permission: "delete/hub",
    params: hubParamsSchema,
    responses: () => ({
      200: { description: "Deleted", schema: z.object({ status: z.literal(true), message: z.string().check(clientText) }) },
      409: {
        description: "The hub is still used (failedCode hub-409), or it changed concurrently (sys-410).",
        failedCodes: ["hub-409", "sys-410"],
      },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
};
