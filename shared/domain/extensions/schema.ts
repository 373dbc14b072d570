import * as z from "zod/mini";
import type { StandardEntity } from "#shared/domain/data-types/schema";
import type { GuardEntry } from "#shared/domain/records/schema";
import { rejectingPrototypeKeys } from "#shared/domain/records/schema";
import { component, ignoringServerSetKeys, clientText } from "#shared/domain/schemas";

/**
 * Custom values of platform entities (spec "extends"; docs/api/extensions.md). An organization's
 * extension data type for an entity (`extends: { entity }`) defines the fields; each entity keeps
 * its values checked by the same value rules as a data source record.
 */

/** Entities this product stores: their own POST/PUT/PATCH take `custom`, their GET answers it. */
export const storedEntities = ["vehicle", "hub"] as const satisfies readonly StandardEntity[];
/** Entities of the identity provider: custom values through `PUT/GET /extension/{entity}/{entityId}`. */
export const identityEntities = ["user", "role", "flow"] as const satisfies readonly StandardEntity[];
export type IdentityEntity = (typeof identityEntities)[number];

/** What an entity stores of its custom values: the type they were checked against, the values, the uniqueness claims held. */
export interface StoredCustomValues {
  dataTypeId: string;
  values: Record<string, unknown>;
  guards: GuardEntry[];
}

/** The `custom` object of a write body: field id → value, checked against the extension data type. */
export const customValuesSchema = rejectingPrototypeKeys(
  z
    .record(z.string().check(clientText, z.minLength(1), z.maxLength(64)), z.unknown())
    .check(
      z.describe(
        "Custom values: `{ <field id of the organization's extension data type for this entity>: value }`, checked by the record value rules (types, validations, defaults, required, unique, uniqueTogether). Sent with no extension data type for the entity: 400 (an empty object is accepted). Details: docs/api/extensions.md.",
      ),
    ),
);

/** `custom` in responses: the values of the current extension type's fields, without the caller's hidden fields. */
export const customValuesViewSchema = z
  .optional(z.record(z.string().check(clientText), z.unknown()))
  .check(
    z.describe(
      "Present when the organization has an extension data type for this entity: the values of its current fields (values of removed fields are not shown), without fields hidden from the caller (permissionDetails `view/data` naming the extension data type).",
    ),
  );

export const extensionParamsSchema = z.strictObject({
  entity: z.enum(identityEntities).check(z.describe("An identity-provider entity; vehicles and hubs carry `custom` on their own routes.")),
  entityId: z
    .string()
    .check(
      clientText,
      z.trim(),
      z.minLength(1),
      z.maxLength(128),
      z.describe("The entity's id in the identity provider (not checked: this service does not store users, roles or flows)."),
    ),
});

/** Keys an extension-values answer carries that a PUT ignores (read-modify-write). */
export const extensionValuesServerSetKeys = ["entity", "entityId", "dataTypeId", "updatedBy"];

export const extensionValuesInputSchema = ignoringServerSetKeys(
  z.strictObject({
    custom: customValuesSchema.check(
      z.describe(
        "The entity's whole custom object (PUT semantics: omitted fields are cleared or take their default; a field hidden from the caller that is omitted keeps its stored value).",
      ),
    ),
  }),
  extensionValuesServerSetKeys,
);
export type ExtensionValuesInput = z.infer<typeof extensionValuesInputSchema>;

export const extensionValuesViewSchema = z.object({
  entity: z.enum(identityEntities),
  entityId: z.string().check(clientText),
  dataTypeId: z.string().check(clientText, z.describe("The extension data type the values are shown by.")),
  custom: z.record(z.string().check(clientText), z.unknown()),
  organizationId: z.string().check(clientText),
  createdBy: z.string().check(clientText),
  updatedBy: z.string().check(clientText),
  createdTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
  updatedTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
});
export type ExtensionValuesView = z.infer<typeof extensionValuesViewSchema>;

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("ExtensionValues", extensionValuesViewSchema);
component("ExtensionValuesInput", extensionValuesInputSchema);
