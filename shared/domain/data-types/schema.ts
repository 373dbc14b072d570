import * as z from "zod";
import { importStateSchema, importViewSchema } from "#shared/domain/data-types/import-state";
import { idSchema, ignoringServerSetKeys, nullableMembers, nullAsAbsent, pageQuery, storableNumber } from "#shared/domain/schemas";

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
export const TITLE_FIELD_ID = "dataId";

const fieldIdText = z.string().max(64);

/** A literal bound (number, or a date/dateTime/time string) or a reference to another field of the same record. */
const boundSchema = z
  .union([storableNumber(), z.string().trim().min(1).max(40), z.strictObject({ ref: fieldIdText.min(1) })])
  .describe("A literal (number for number fields; `YYYY-MM-DD`, `YYYY-MM-DD HH:mm[:ss]` / ISO 8601, `HH:mm[:ss]` for date, dateTime, time) or `{ ref: <field id> }` naming another field of the same type.");

export const validationsSchema = nullAsAbsent(
  z
    .strictObject({
      min: boundSchema.optional(),
      max: boundSchema.optional(),
      minInclusive: z.boolean().optional().describe("date, dateTime, time only; default true."),
      maxInclusive: z.boolean().optional().describe("date, dateTime, time only; default true."),
      decimals: storableNumber().int().min(0).max(10).optional().describe("number only: maximum decimal places."),
      minSelected: storableNumber().int().min(0).max(1000).optional().describe("multiOption only."),
      maxSelected: storableNumber().int().min(0).max(1000).optional().describe("multiOption only."),
    })
    .describe("Checked when a record is saved. A key the field's type does not support is rejected when the data type is saved. A null key is the same as an absent one."),
);

export type FieldValidations = z.infer<typeof validationsSchema>;

export const relationSchema = nullAsAbsent(
  z.strictObject({
    kind: z.enum(relationKinds).describe("belongsTo stores one target _id; belongsToMany an array; hasOne/hasMany store nothing and resolve through the target's `via` field."),
    targetKind: z.enum(relationTargetKinds),
    target: z.string().trim().min(1).max(64).describe("A data type _id of this organization (targetKind dataType) or one of user, hub, vehicle, role, flow (standard)."),
    via: fieldIdText
      .min(1)
      .optional()
      .describe("hasOne/hasMany only (required there): id of the belongsTo/belongsToMany field on the target data type that points back to this data type. null is the same as absent."),
  }),
);

export type FieldRelation = z.infer<typeof relationSchema>;

/** Optional text attributes accept null as "not set", so a client can clear them on PUT/PATCH. */
const optionalText = (max: number) => z.string().max(max).nullish();

export const fieldInputSchema = nullAsAbsent(
  z
    .strictObject({
      id: fieldIdText
        .optional()
        .describe("Required except on the title field (whose id is always `dataId`). Pattern ^[A-Za-z][A-Za-z0-9_]*$, unique in the data type, not a record system key."),
      title: z.string().trim().min(1).max(200),
      type: z
        .enum(fieldTypes)
        .describe("Responses echo this request enumeration; the legacy `string` name seen in an old response example is never produced."),
      required: z.boolean().optional().describe("Either `required` or its synonym `isRequired` must be sent (title fields: forced true). Responses carry `required` only."),
      isRequired: z.boolean().optional().describe("Synonym of `required`; when both are sent they must agree."),
      description: optionalText(2000),
      inputType: optionalText(100),
      default: optionalText(1000),
      optionData: z
        .array(z.string().trim().min(1).max(200))
        .max(500)
        .optional()
        .describe("option/multiOption: required, non-empty, distinct. Other types: absent or empty."),
      unique: z.boolean().optional().describe("Default false; always true on the title field."),
      searchable: z.boolean().optional().describe("Default false; always true on the title field. At most 5 searchable fields per data type, title included."),
      show: z.boolean().optional().describe("Default true; always true on the title field."),
      validations: validationsSchema.nullish(),
      relation: relationSchema.nullish().describe("Required when type is relation, rejected otherwise."),
      primaryKey: z.boolean().optional().describe("Legacy marker: accepted only on the identifying (title or primaryKey) field; not stored."),
      format: optionalText(50),
    })
    .describe("Every optional attribute also accepts null, read as absent (its default applies)."),
);

export type FieldInput = z.infer<typeof fieldInputSchema>;

const extendsSchema = z
  .strictObject({ entity: z.enum(standardEntities) })
  .describe("Attaches the fields to a platform entity: forces commonData true (a sent commonData false is coerced to true), no title field, at most one per entity per organization. Cannot be added or removed after creation; the entity may change.");

const providerConfigInputSchema = nullAsAbsent(
  z.strictObject({
    url: z.string().trim().min(1).max(2048).describe("Absolute http(s) URL of the external GET API; loopback, link-local and private addresses are rejected."),
    key: z.string().min(1).max(2048).optional().describe("Credential presented to the external API. Never echoed in full (responses mask it); sending the masked value back keeps the stored key while the URL keeps its origin; a URL on another origin needs the real key again."),
  }),
);

/** Every writable attribute, shared by POST/PUT (whole, with defaults) and PATCH (any subset). */
const dataTypeShape = {
  name: z
    .string()
    .trim()
    .normalize()
    .min(1)
    .max(100)
    .regex(/^[^\p{Cc}]*$/u, "name must not contain control characters")
    .describe("Unique per organization, compared case-insensitively."),
  fields: z.array(fieldInputSchema).min(1).max(MAX_FIELDS),
  limitUser: z.boolean(),
  commonData: z.boolean().describe("Default false. Cannot change after creation (on PUT, omitted means unchanged)."),
  uniqueTogether: z
    .array(z.array(fieldIdText.min(1)).max(10))
    .max(20)
    .describe("Combinations of ≥ 2 field ids whose values together must not repeat; no title field, no relation field filled from another data type, no combination listed twice (order-insensitive)."),
  extends: extendsSchema.nullable(),
  provider: z.enum(providers),
  providerConfig: providerConfigInputSchema.nullable().describe("Required for external-api; null (or omitted) for internal."),
};

/** Server-set attributes a data type answers besides the common ones (serverSetKeys): ignored when sent. */
export const dataTypeServerSetKeys = ["locked", "import"];

/** POST and PUT: a null optional attribute is absent (its default applies; commonData null = unchanged on PUT). */
export const dataTypeInputSchema = ignoringServerSetKeys(
  nullAsAbsent(
    z.strictObject({
      name: dataTypeShape.name,
      fields: dataTypeShape.fields,
      limitUser: dataTypeShape.limitUser.default(false),
      commonData: dataTypeShape.commonData.optional(),
      uniqueTogether: dataTypeShape.uniqueTogether.default([]),
      extends: dataTypeShape.extends.default(null),
      provider: dataTypeShape.provider.default("internal"),
      providerConfig: dataTypeShape.providerConfig.default(null),
    }),
  ),
  dataTypeServerSetKeys,
);

export type DataTypeInput = z.output<typeof dataTypeInputSchema>;

/** PATCH: any subset; a null attribute resets it (the merged data type takes that attribute's default). */
export const dataTypePatchSchema = ignoringServerSetKeys(
  z
    .strictObject(nullableMembers(dataTypeShape))
    .partial()
    .refine((patch) => Object.keys(patch).length > 0, { message: "send at least one field to change" }),
  dataTypeServerSetKeys,
);

export type DataTypePatch = z.infer<typeof dataTypePatchSchema>;

/** A field as stored and returned: every flag resolved, title fields forced. */
export const fieldSchema = z.object({
  id: z.string(),
  title: z.string(),
  type: z.enum(fieldTypes),
  required: z.boolean(),
  unique: z.boolean().default(false),
  searchable: z.boolean().default(false),
  show: z.boolean().default(true),
  optionData: z.array(z.string()).default([]),
  description: z.string().optional(),
  inputType: z.string().optional(),
  default: z.string().optional(),
  validations: validationsSchema.optional(),
  relation: relationSchema.optional(),
  format: z.string().optional(),
});

export type Field = z.infer<typeof fieldSchema>;

export const titleRules = ["words", "no-space"] as const;

/**
 * The stored data type. Readers (the records area) get it whole, with the provider key in clear;
 * responses go through `toDataTypeView`, which masks the key and leaves out `titleRule`.
 */
export const dataTypeSchema = z.object({
  _id: idSchema,
  name: z.string(),
  fields: z.array(fieldSchema),
  limitUser: z.boolean().default(false),
  commonData: z.boolean().default(false),
  uniqueTogether: z.array(z.array(z.string())).default([]),
  extends: z.object({ entity: z.enum(standardEntities) }).nullable().default(null),
  provider: z.enum(providers).default("internal"),
  providerConfig: z.object({ url: z.string(), key: z.string().optional() }).nullable().default(null),
  /** True while a background import from the earlier version runs: updates and deletes answer 409. */
  locked: z.boolean().default(false),
  /** `no-space`: imported from the earlier version and not yet saved here, titles may not contain spaces. */
  titleRule: z.enum(titleRules).default("words"),
  /** Set on types imported from the earlier version: the background import's state (import-state.ts). */
  import: importStateSchema.optional(),
  createdBy: z.string(),
  organizationId: z.string(),
  createdTime: z.string(),
  updatedTime: z.string(),
});

export type DataType = z.infer<typeof dataTypeSchema>;

export const dataTypeViewSchema = dataTypeSchema.omit({ titleRule: true }).extend({
  providerConfig: z
    .object({ url: z.string(), key: z.string().optional().describe("Masked: `****` plus at most the last 4 characters.") })
    .nullable(),
  locked: z.boolean().describe("True while an import from the earlier version runs; updates and deletes answer 409 until it is ready."),
  import: importViewSchema.optional(),
  createdTime: z.string().describe("Y-m-d H:i:s, UTC"),
  updatedTime: z.string().describe("Y-m-d H:i:s, UTC"),
});

export type DataTypeView = z.infer<typeof dataTypeViewSchema>;

export const dataTypeParamsSchema = z.strictObject({ dataTypeId: z.string().min(1).max(64) });

export const dataTypeListQuerySchema = pageQuery({
  name: z.string().trim().min(1).max(100).optional().describe("Case-insensitive prefix of the name."),
});
