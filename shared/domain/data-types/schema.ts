import * as z from "zod/mini";
import { importStateSchema, importViewSchema } from "#shared/domain/data-types/import-state";
import {
  component,
  idSchema,
  ignoringServerSetKeys,
  nullableMembers,
  nullAsAbsent,
  pageQuery,
  storableNumber,
  clientFreeText,
  clientText,
} from "#shared/domain/schemas";

/**
 * Data type model (spec "Data type"). The zod schemas here check the *shape* of a request; the
 * rules that span fields or need other data types (title, uniqueTogether, relations, searchable
 * count…) live in rules.ts so every violation can be reported together with its field path.
 */
export const fieldTypes = [
  "title",
  "text",
  "number",
  "boolean",
  "option",
  "multiOption",
  "date",
  "dateTime",
  "time",
  "geolocation",
  "phoneNumber",
  "relation",
  "primaryKey",
] as const;
export type FieldType = (typeof fieldTypes)[number];

/** Platform entities: targets of `standard` relations and of `extends`. */
export const standardEntities = ["user", "hub", "vehicle", "role", "flow"] as const;
export type StandardEntity = (typeof standardEntities)[number];

export const relationKinds = ["belongsTo", "belongsToMany", "hasOne", "hasMany"] as const;
export const relationTargetKinds = ["dataType", "standard"] as const;
export const providers = ["internal", "external-api"] as const;

export const MAX_FIELDS = 200;
export const MAX_SEARCHABLE_FIELDS = 5;
export { TITLE_FIELD_ID } from "#shared/domain/data-types/title-field";

const fieldIdText = z.string().check(clientText, z.maxLength(64));

/** A literal bound (number, or a date/dateTime/time string) or a reference to another field of the same record. */
const boundSchema = z
  .union([
    storableNumber(),
    z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(40)),
    z.strictObject({ ref: fieldIdText.check(z.minLength(1)) }),
  ])
  .check(
    z.describe(
      "A literal (number for number fields; `YYYY-MM-DD`, `YYYY-MM-DD HH:mm[:ss]` / ISO 8601, `HH:mm[:ss]` for date, dateTime, time) or `{ ref: <field id> }` naming another field of the same type.",
    ),
  );

export const validationsSchema = nullAsAbsent(
  z
    .strictObject({
      min: z.optional(boundSchema),
      max: z.optional(boundSchema),
      minInclusive: z.optional(z.boolean()).check(z.describe("date, dateTime, time only; default true.")),
      maxInclusive: z.optional(z.boolean()).check(z.describe("date, dateTime, time only; default true.")),
      decimals: z
        .optional(storableNumber().check(z.int(), z.minimum(0), z.maximum(10)))
        .check(z.describe("number only: maximum decimal places.")),
      minSelected: z.optional(storableNumber().check(z.int(), z.minimum(0), z.maximum(1000))).check(z.describe("multiOption only.")),
      maxSelected: z.optional(storableNumber().check(z.int(), z.minimum(0), z.maximum(1000))).check(z.describe("multiOption only.")),
    })
    .check(
      z.describe(
        "Checked when a record is saved. A key the field's type does not support is rejected when the data type is saved. A null key is the same as an absent one.",
      ),
    ),
);

export type FieldValidations = z.infer<typeof validationsSchema>;

export const relationSchema = nullAsAbsent(
  z.strictObject({
    kind: z
      .enum(relationKinds)
      .check(
        z.describe(
          "belongsTo stores one target _id; belongsToMany an array; hasOne/hasMany store nothing and resolve through the target's `via` field.",
        ),
      ),
    targetKind: z.enum(relationTargetKinds),
    target: z
      .string()
      .check(
        clientText,
        z.trim(),
        z.minLength(1),
        z.maxLength(64),
        z.describe("A data type _id of this organization (targetKind dataType) or one of user, hub, vehicle, role, flow (standard)."),
      ),
    via: z
      .optional(fieldIdText.check(z.minLength(1)))
      .check(
        z.describe(
          "hasOne/hasMany only (required there): id of the belongsTo/belongsToMany field on the target data type that points back to this data type. null is the same as absent.",
        ),
      ),
  }),
);

export type FieldRelation = z.infer<typeof relationSchema>;

/** Optional text attributes accept null as "not set", so a client can clear them on PUT/PATCH. */
const optionalText = (max: number) => z.nullish(z.string().check(clientText, z.maxLength(max)));

export const fieldInputSchema = nullAsAbsent(
  z
    .strictObject({
      id: z
        .optional(fieldIdText)
        .check(
          z.describe(
            "Required except on the title field (whose id is always `dataId`). Pattern ^[A-Za-z][A-Za-z0-9_]*$, unique in the data type, not a record system key.",
          ),
        ),
      title: z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(200)),
      type: z
        .enum(fieldTypes)
        .check(
          z.describe(
            "Responses echo this request enumeration; the legacy `string` name seen in an old response example is never produced.",
          ),
        ),
      required: z
        .optional(z.boolean())
        .check(
          z.describe(
            "Either `required` or its synonym `isRequired` must be sent (title fields: forced true). Responses carry `required` only.",
          ),
        ),
      isRequired: z.optional(z.boolean()).check(z.describe("Synonym of `required`; when both are sent they must agree.")),
      description: z.nullish(z.string().check(clientFreeText, z.maxLength(2000))),
      inputType: optionalText(100),
      default: optionalText(1000),
      optionData: z
        .optional(z.array(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(200))).check(z.maxLength(500)))
        .check(z.describe("option/multiOption: required, non-empty, distinct. Other types: absent or empty.")),
      unique: z.optional(z.boolean()).check(z.describe("Default false; always true on the title field.")),
      searchable: z
        .optional(z.boolean())
        .check(z.describe("Default false; always true on the title field. At most 5 searchable fields per data type, title included.")),
      show: z.optional(z.boolean()).check(z.describe("Default true; always true on the title field.")),
      validations: z.nullish(validationsSchema),
      relation: z.nullish(relationSchema).check(z.describe("Required when type is relation, rejected otherwise.")),
      primaryKey: z
        .optional(z.boolean())
        .check(z.describe("Legacy marker: accepted only on the identifying (title or primaryKey) field; not stored.")),
      format: optionalText(50),
    })
    .check(
      z.meta({
        description: "Every optional attribute also accepts null, read as absent (its default applies).",
        // The rule of fieldRules (rules.ts): a field that is not the title sends `required` or its synonym `isRequired`.
        // Said here so a client generated from the document requires one of them (under allOf: generators intersect it with the properties).
        allOf: [
          {
            anyOf: [
              { type: "object", properties: { required: { type: "boolean" } }, required: ["required"] },
              { type: "object", properties: { isRequired: { type: "boolean" } }, required: ["isRequired"] },
              { type: "object", properties: { type: { const: "title" } }, required: ["type"] },
            ],
          },
        ],
      }),
    ),
);

export type FieldInput = z.infer<typeof fieldInputSchema>;

const extendsSchema = z
  .strictObject({ entity: z.enum(standardEntities) })
  .check(
    z.describe(
      "Attaches the fields to a platform entity: forces commonData true (a sent commonData false is coerced to true), no title field, at most one per entity per organization. Cannot be added or removed after creation; the entity may change.",
    ),
  );

const providerConfigInputSchema = nullAsAbsent(
  z.strictObject({
    url: z
      .string()
      .check(
        clientText,
        z.trim(),
        z.minLength(1),
        z.maxLength(2048),
        z.describe("Absolute http(s) URL of the external GET API; loopback, link-local and private addresses are rejected."),
      ),
    key: z
      .optional(z.string().check(clientText, z.minLength(1), z.maxLength(2048)))
      .check(
        z.describe(
          "Credential presented to the external API. Never echoed in full (responses mask it); sending the masked value back keeps the stored key while the URL keeps its origin; a URL on another origin needs the real key again.",
        ),
      ),
  }),
);

/** Every writable attribute, shared by POST/PUT (whole, with defaults) and PATCH (any subset). */
const dataTypeShape = {
  name: z
    .string()
    .check(
      clientText,
      z.trim(),
      z.normalize(),
      z.minLength(1),
      z.maxLength(100),
      z.regex(/^[^\p{Cc}]*$/u, "name must not contain control characters"),
      z.describe("Unique per organization, compared case-insensitively."),
    ),
  fields: z.array(fieldInputSchema).check(z.minLength(1), z.maxLength(MAX_FIELDS)),
  limitUser: z.boolean(),
  commonData: z.boolean().check(z.describe("Default false. Cannot change after creation (on PUT, omitted means unchanged).")),
  uniqueTogether: z
    .array(z.array(fieldIdText.check(z.minLength(1))).check(z.maxLength(10)))
    .check(
      z.maxLength(20),
      z.describe(
        "Combinations of ≥ 2 field ids whose values together must not repeat; no title field, no relation field filled from another data type, no combination listed twice (order-insensitive).",
      ),
    ),
  extends: z.nullable(extendsSchema),
  provider: z.enum(providers),
  providerConfig: z.nullable(providerConfigInputSchema).check(z.describe("Required for external-api; null (or omitted) for internal.")),
};

/** Server-set attributes a data type answers besides the common ones (serverSetKeys): ignored when sent. */
export const dataTypeServerSetKeys = ["locked", "import"];

/** POST and PUT: a null optional attribute is absent (its default applies; commonData null = unchanged on PUT). */
export const dataTypeInputSchema = ignoringServerSetKeys(
  nullAsAbsent(
    z.strictObject({
      name: dataTypeShape.name,
      fields: dataTypeShape.fields,
      limitUser: z._default(dataTypeShape.limitUser, false),
      commonData: z.optional(dataTypeShape.commonData),
      uniqueTogether: z._default(dataTypeShape.uniqueTogether, []),
      extends: z._default(dataTypeShape.extends, null),
      provider: z._default(dataTypeShape.provider, "internal"),
      providerConfig: z._default(dataTypeShape.providerConfig, null),
    }),
  ),
  dataTypeServerSetKeys,
);

export type DataTypeInput = z.output<typeof dataTypeInputSchema>;

/** PATCH: any subset; a null attribute resets it (the merged data type takes that attribute's default). */
export const dataTypePatchSchema = ignoringServerSetKeys(
  z
    .partial(z.strictObject(nullableMembers(dataTypeShape)))
    .check(z.refine((patch) => Object.keys(patch).length > 0, { message: "send at least one field to change" })),
  dataTypeServerSetKeys,
);

export type DataTypePatch = z.infer<typeof dataTypePatchSchema>;

/** A field as stored and returned: every flag resolved, title fields forced. */
export const fieldSchema = z.object({
  id: z.string().check(clientText),
  title: z.string().check(clientText),
  type: z.enum(fieldTypes),
  required: z.boolean(),
  unique: z._default(z.boolean(), false),
  searchable: z._default(z.boolean(), false),
  show: z._default(z.boolean(), true),
  optionData: z._default(z.array(z.string().check(clientText)), []),
  description: z.optional(z.string().check(clientText)),
  inputType: z.optional(z.string().check(clientText)),
  default: z.optional(z.string().check(clientText)),
  validations: z.optional(validationsSchema),
  relation: z.optional(relationSchema),
  format: z.optional(z.string().check(clientText)),
});

export type Field = z.infer<typeof fieldSchema>;

export const titleRules = ["words", "no-space"] as const;

/**
 * The stored data type. Readers (the records area) get it whole, with the provider key in clear;
 * responses go through `toDataTypeView`, which masks the key and leaves out `titleRule`.
 */
export const dataTypeSchema = z.object({
  _id: idSchema,
  name: z.string().check(clientText),
  fields: z.array(fieldSchema),
  limitUser: z._default(z.boolean(), false),
  commonData: z._default(z.boolean(), false),
  uniqueTogether: z._default(z.array(z.array(z.string().check(clientText))), []),
  extends: z._default(z.nullable(z.object({ entity: z.enum(standardEntities) })), null),
  provider: z._default(z.enum(providers), "internal"),
  providerConfig: z._default(
    z.nullable(z.object({ url: z.string().check(clientText), key: z.optional(z.string().check(clientText)) })),
    null,
  ),
  /** True while a background import from the earlier version runs: updates and deletes answer 409. */
  locked: z._default(z.boolean(), false),
  /** `no-space`: imported from the earlier version and not yet saved here, titles may not contain spaces. */
  titleRule: z._default(z.enum(titleRules), "words"),
  /** Set on types imported from the earlier version: the background import's state (import-state.ts). */
  import: z.optional(importStateSchema),
  createdBy: z.string().check(clientText),
  organizationId: z.string().check(clientText),
  createdTime: z.string().check(clientText),
  updatedTime: z.string().check(clientText),
});

export type DataType = z.infer<typeof dataTypeSchema>;

export const dataTypeViewSchema = z.extend(z.omit(dataTypeSchema, { titleRule: true }), {
  providerConfig: z.nullable(
    z.object({
      url: z.string().check(clientText),
      key: z.optional(z.string().check(clientText)).check(z.describe("Masked: `****` plus at most the last 4 characters.")),
    }),
  ),
  locked: z
    .boolean()
    .check(z.describe("True while an import from the earlier version runs; updates and deletes answer 409 until it is ready.")),
  import: z.optional(importViewSchema),
  createdTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
  updatedTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
});

export type DataTypeView = z.infer<typeof dataTypeViewSchema>;

export const dataTypeParamsSchema = z.strictObject({ dataTypeId: z.string().check(clientText, z.minLength(1), z.maxLength(64)) });

export const dataTypeListQuerySchema = pageQuery({
  name: z
    .optional(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(100)))
    .check(z.describe("Case-insensitive prefix of the name.")),
});

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("DataType", dataTypeViewSchema);
component("DataTypeInput", dataTypeInputSchema);
component("DataTypePatch", dataTypePatchSchema);
component("DataTypeField", fieldSchema);
component("DataTypeFieldInput", fieldInputSchema);
