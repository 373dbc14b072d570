import { extensionParamsSchema, extensionValuesInputSchema, extensionValuesViewSchema } from "#shared/domain/extensions/schema";
import { successBodySchema } from "#shared/domain/schemas";
import { defineRoute } from "#shared/http/route";

const extensionBody = () => successBodySchema(extensionValuesViewSchema);
const tag = "Entity extensions";
const about =
  "Custom values of a user, role or flow (entities of the identity provider, which this service does not store), checked by the organization's extension data type for that entity (`extends: { entity }`) with the record value rules; vehicles and hubs take `custom` on their own routes. Fields hidden from the caller (permissionDetails `view/data` naming the extension data type) are left out. See docs/api/extensions.md.";

export const extensionRoutes = {
  get: defineRoute({
    operationId: "getExtensionValues",
    method: "GET",
    path: "/extension/{entity}/{entityId}",
    handler: "functions/http/extensions/get.ts",
    summary: "Read an entity's custom values",
    description: `${about}\n\n404 when no values were stored for this id in the caller's organization, or the organization has no extension data type for the entity.`,
    tag,
    permission: "view/extension",
    params: extensionParamsSchema,
    responses: () => ({ 200: { description: "The entity's custom values", schema: extensionBody() } }),
    grants: ["tableRead"],
  }),
  replace: defineRoute({
    operationId: "replaceExtensionValues",
    method: "PUT",
    path: "/extension/{entity}/{entityId}",
    handler: "functions/http/extensions/replace.ts",
    summary: "Create or replace an entity's custom values",
    description: `${about}\n\nThe body's \`custom\` is the whole custom object (omitted fields are cleared or take their default; an omitted field hidden from the caller keeps its value). Unique fields are claimed in the same transaction (409 ext-001 when another entity holds the value); 400 naming \`entity\` when the organization has no extension data type for it.`,
    tag,
    permission: "edit/extension",
    params: extensionParamsSchema,
    body: extensionValuesInputSchema,
    responses: () => ({
      200: { description: "The stored custom values", schema: extensionBody() },
      409: {
        description: "A unique custom value is taken (ext-001), or the extension type changed meanwhile (data-003, retry).",
        failedCodes: ["ext-001", "data-003"],
      },
    }),
    grants: ["tableWrite"],
  }),
};
