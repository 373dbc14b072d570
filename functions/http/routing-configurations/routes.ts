import * as z from "zod/mini";
import {
  configurationInputSchema,
  configurationListQuerySchema,
  configurationParamsSchema,
  configurationPatchSchema,
  configurationSchema,
} from "#shared/domain/configurations/schema";
import { pageBodySchema, successBodySchema, clientText } from "#shared/domain/schemas";
import { defineRoute } from "#shared/http/route";

const configurationBody = () => successBodySchema(configurationSchema);
const tag = "Routing configuration profiles";
const bodyRules =
  "`hubId` must name an existing hub of the organization (and be one of the token's hubIds when it lists any); each of `vehicleIds` must be a vehicle of that hub at the time of the write (400 naming `vehicleIds.<index>`). Routing schedules name a profile by `configurationId` and read it at run time, so a change applies from the next run.";

export const configurationRoutes = {
  create: defineRoute({
    operationId: "createRoutingConfiguration",
    method: "POST",
    path: "/routing/configuration",
    handler: "functions/http/routing-configurations/create.ts",
    summary: "Create a configuration profile",
    description: `The hub, vehicles and optimizer settings a routing run plans with. ${bodyRules}`,
    tag,
    permission: "add/routing-configuration",
    body: configurationInputSchema,
    responses: () => ({ 201: { description: "Created", schema: configurationBody() } }),
    grants: ["tableWrite"],
    idempotent: true,
  }),
  list: defineRoute({
    operationId: "listRoutingConfigurations",
    method: "GET",
    path: "/routing/configurations",
    handler: "functions/http/routing-configurations/list.ts",
    summary: "List configuration profiles",
    description:
      "Oldest first, optionally of one hub. With a token restricted to hubs only those hubs' profiles are listed (a page may then hold fewer than `limit`; follow nextCursor until it is null).",
    tag,
    permission: "view/routing-configuration",
    query: configurationListQuerySchema,
    responses: () => ({ 200: { description: "A page of profiles", schema: pageBodySchema(configurationSchema) } }),
    grants: ["tableRead"],
  }),
  get: defineRoute({
    operationId: "getRoutingConfiguration",
    method: "GET",
    path: "/routing/configuration/{configurationId}",
    handler: "functions/http/routing-configurations/get.ts",
    summary: "Read a configuration profile",
    tag,
    permission: "view/routing-configuration",
    params: configurationParamsSchema,
    responses: () => ({ 200: { description: "The profile", schema: configurationBody() } }),
    grants: ["tableRead"],
    versioned: true,
  }),
  replace: defineRoute({
    operationId: "replaceRoutingConfiguration",
    method: "PUT",
    path: "/routing/configuration/{configurationId}",
    handler: "functions/http/routing-configurations/replace.ts",
    summary: "Replace a configuration profile",
    description: `Full replace: omitted optional fields take their defaults. ${bodyRules}`,
    tag,
    permission: "edit/routing-configuration",
    params: configurationParamsSchema,
    body: configurationInputSchema,
    responses: () => ({ 200: { description: "The updated profile", schema: configurationBody() } }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  patch: defineRoute({
    operationId: "patchRoutingConfiguration",
    method: "PATCH",
    path: "/routing/configuration/{configurationId}",
    handler: "functions/http/routing-configurations/patch.ts",
    summary: "Change some fields of a configuration profile",
    description: `Top-level fields sent replace the stored ones (capacityConstraint whole). The merged profile is validated as a whole, listed vehicles included; a rejected patch changes nothing. ${bodyRules}`,
    tag,
    permission: "edit/routing-configuration",
    params: configurationParamsSchema,
    body: configurationPatchSchema,
    responses: () => ({ 200: { description: "The updated profile", schema: configurationBody() } }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  remove: defineRoute({
    operationId: "deleteRoutingConfiguration",
    method: "DELETE",
    path: "/routing/configuration/{configurationId}",
    handler: "functions/http/routing-configurations/delete.ts",
    summary: "Delete a configuration profile",
    description:
      "Only a profile no routing schedule names: while any schedule of the organization names it, the answer is 409 (failedCode configuration-409); point the schedules at another profile or delete them first. (A schedule saved in the same instant as the delete can slip past the check; its run is then recorded SKIPPED, not retried.)",
    tag,
    permission: "delete/routing-configuration",
    params: configurationParamsSchema,
    responses: () => ({
      200: { description: "Deleted", schema: z.object({ status: z.literal(true), message: z.string().check(clientText) }) },
      409: {
        description: "A routing schedule still names the profile (failedCode configuration-409).",
        failedCodes: ["configuration-409", "sys-410"],
      },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
};
