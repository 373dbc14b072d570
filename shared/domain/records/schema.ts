import * as z from "zod/mini";
import { component, idSchema, ignoringServerSetKeys, pageQuery, clientText } from "#shared/domain/schemas";

/**
 * Data source records (spec "Data source record", "Data source" endpoints). The zod schemas here
 * check the request *envelope*; every custom field value is checked against the record's data type
 * by values.ts, which reports each violation with the field id.
 */

/** Hub scope of a record of a `commonData` type (shared by every hub). */
export const COMMON_SCOPE = "*";

/** A record as stored: custom field values under `values`, derived index items under `index`. */
export interface StoredRecord {
  _id: string;
  dataId: string;
  dataTypeId: string;
  /** null for records of commonData types. */
  hubId: string | null;
  values: Record<string, unknown>;
  /** What this record wrote besides itself, so an update or delete removes exactly that. */
  index: RecordIndex;
  organizationId: string;
  createdBy: string;
  updatedBy: string;
  createdTime: string;
  updatedTime: string;
}

export interface GuardEntry {
  /** Field id (`unique`) or `+a+b` (uniqueTogether combination, ids sorted). */
  name: string;
  scope: string;
  value: string;
}

export interface LinkEntry {
  fieldId: string;
  targetId: string;
}

export interface RecordIndex {
  guards: GuardEntry[];
  tokens: string[];
  links: LinkEntry[];
  /**
   * The search token layout the store wrote this record's tokens in (shared/store/record-tokens.ts).
   * Records written before the current one have another or none: their next write deletes the old
   * token items and writes every token again.
   */
  searchLayout?: number | undefined;
}

export const hubScopeOf = (record: Pick<StoredRecord, "hubId">) => record.hubId ?? COMMON_SCOPE;

const dataTypeIdParam = z
  .string()
  .check(clientText, z.trim(), z.minLength(1), z.maxLength(64), z.describe("The data type's `_id`. Either this or dataTypeName."));
const dataTypeNameParam = z
  .string()
  .check(
    clientText,
    z.trim(),
    z.minLength(1),
    z.maxLength(100),
    z.describe("The data type's name (case-insensitive). Either this or dataTypeId."),
  );
const hubIdParam = z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(64));
const fieldsParam = z
  .string()
  .check(
    clientText,
    z.maxLength(2000),
    z.describe(
      "Comma-separated field ids (custom fields or `hubId`, `dataTypeId`, `data_type`, `organizationId`, `createdBy`, `createdTime`, `updatedTime`); the response carries only these plus `_id` and `dataId`. Naming a field hidden from the caller (permissionDetails `view/data`) is a 403 listing them.",
    ),
  );

const dataIdBody = z
  .string()
  .check(
    clientText,
    z.maxLength(200),
    z.describe(
      "The record's title: letters, digits, `-`, `_` and single spaces between words, 1–200 characters (no spaces at all on a type imported from the earlier version and not saved since). Unique per hub and type (per type when commonData).",
    ),
  );

/**
 * Keys a JSON body may carry as its own but that a plain object cannot hold as data (`__proto__`
 * would set the prototype; zod drops it). They are never fields, so they are rejected by name here,
 * before parsing, like any other unknown key.
 */
const PROTOTYPE_KEYS = ["__proto__"];

export function rejectingPrototypeKeys<T extends z.core.$ZodType>(schema: T) {
  return z.pipe(
    z.transform((input: unknown, context) => {
      if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
      for (const key of PROTOTYPE_KEYS) {
        if (Object.hasOwn(input, key))
          context.issues.push({ code: "custom", path: [key], message: "unknown field: not a field of this data type", input });
      }
      return input;
    }),
    schema,
  );
}

/**
 * Server-set keys a record answers besides the common ones (serverSetKeys): ignored when a body
 * sends them, so a record read by GET can be sent back. (Resolved hasOne/hasMany values are
 * server-set too; the value rules ignore them, see values.ts.)
 */
export const recordServerSetKeys = ["data_type", "updatedBy"];

/**
 * POST /data: custom field values sit flat at the top level next to these keys, as the original
 * product sends them. Unknown keys are rejected by the domain (they are not fields of the type).
 */
export const recordCreateSchema = ignoringServerSetKeys(
  rejectingPrototypeKeys(
    z
      .looseObject({
        dataTypeId: z.optional(dataTypeIdParam),
        dataTypeName: z.optional(dataTypeNameParam),
        hubId: z
          .nullish(hubIdParam)
          .check(
            z.describe(
              "Required unless the type has commonData true (then it must be absent or null). Must name an existing hub of the organization and, when the token lists hubIds, one of them.",
            ),
          ),
        dataId: z.optional(dataIdBody),
      })
      .check(z.describe("`{ dataTypeId | dataTypeName, hubId, dataId, <fieldId>: value, … }`")),
  ),
  recordServerSetKeys,
);

export type RecordCreateInput = z.infer<typeof recordCreateSchema>;

/** PUT: the whole record (omitted fields are cleared or take their default); dataId and hubId omitted mean unchanged. */
const recordReplaceObject = z.looseObject({
  dataTypeId: z.optional(dataTypeIdParam).check(z.describe("Optional; when sent it must be the path's data type.")),
  dataTypeName: z.optional(dataTypeNameParam).check(z.describe("Optional; when sent it must be the path's data type.")),
  hubId: z.nullish(hubIdParam).check(z.describe("Moves the record to another hub (non-commonData types). Omitted: unchanged.")),
  dataId: z.optional(dataIdBody).check(z.describe("Renames the record. Omitted: unchanged.")),
});

export const recordReplaceSchema = ignoringServerSetKeys(rejectingPrototypeKeys(recordReplaceObject), recordServerSetKeys);

export type RecordReplaceInput = z.infer<typeof recordReplaceSchema>;

export const recordPatchSchema = ignoringServerSetKeys(
  rejectingPrototypeKeys(
    recordReplaceObject.check(
      z.describe("Keys sent replace the stored values; `null` clears a field. The merged record is validated as a whole."),
    ),
  ),
  recordServerSetKeys,
);

export const recordPathParamsSchema = z.strictObject({
  dataTypeName: z.string().check(clientText, z.minLength(1), z.maxLength(100)),
  dataId: z.string().check(clientText, z.minLength(1), z.maxLength(400)),
});

export const recordDataIdParamsSchema = z.strictObject({ dataId: z.string().check(clientText, z.minLength(1), z.maxLength(400)) });

export const recordListQuerySchema = pageQuery({
  dataTypeId: z.optional(dataTypeIdParam),
  dataTypeName: z.optional(dataTypeNameParam),
  hubId: z.optional(hubIdParam).check(z.describe("Only records of this hub (non-commonData types).")),
  q: z
    .optional(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(200)))
    .check(
      z.describe(
        "Search: records whose searchable fields (title included) contain a word starting with each word of q, ignoring case and accents. Words are runs of letters and digits. Results come in order of the matched word.",
      ),
    ),
  fields: z.optional(fieldsParam),
});

export type RecordListQuery = z.infer<typeof recordListQuerySchema>;

export const recordGetQuerySchema = z.strictObject({
  dataTypeId: z
    .optional(dataTypeIdParam)
    .check(z.describe("Needed when the same dataId exists in more than one data type (400 lists them).")),
  dataTypeName: z.optional(dataTypeNameParam),
  hubId: z.optional(hubIdParam).check(z.describe("Needed when a non-commonData type holds the dataId in several hubs (400 lists them).")),
  fields: z.optional(fieldsParam),
});

export type RecordGetQuery = z.infer<typeof recordGetQuerySchema>;

export const recordTypeQuerySchema = z.strictObject({
  hubId: z.optional(hubIdParam).check(z.describe("Needed when a non-commonData type holds the dataId in several hubs (400 lists them).")),
  fields: z.optional(fieldsParam),
});

export const recordScopeQuerySchema = z.strictObject({
  hubId: z.optional(hubIdParam).check(z.describe("Needed when a non-commonData type holds the dataId in several hubs (400 lists them).")),
});

/** A record as returned: custom field values flat, in the data type's field order. */
export const recordViewSchema = z
  .looseObject({
    _id: idSchema,
    dataId: z.string().check(clientText),
    dataTypeId: z.optional(idSchema),
    data_type: z.optional(z.object({ _id: idSchema, name: z.string().check(clientText) })),
    hubId: z.optional(z.nullable(z.string().check(clientText))).check(z.describe("null for records of commonData types.")),
    organizationId: z.optional(z.string().check(clientText)),
    createdBy: z.optional(z.string().check(clientText)),
    createdTime: z.optional(z.string().check(clientText)).check(z.describe("Y-m-d H:i:s, UTC")),
    updatedTime: z.optional(z.string().check(clientText)).check(z.describe("Y-m-d H:i:s, UTC")),
  })
  .check(
    z.describe(
      "`{ _id, dataId, dataTypeId, data_type: { _id, name }, hubId, <fields…>, organizationId, createdBy, createdTime, updatedTime }`. Field values: geolocation `{ lat, lng }`, phoneNumber `+<digits>`, ranges `{ from, to }`, belongsTo one `_id`, belongsToMany an array of `_id`s; hasOne (`_id` or null) and hasMany (array of `_id`s, at most 100) are resolved from the target's `via` field. Absent values are left out. With `fields`, only the named keys (plus `_id`, `dataId`).",
    ),
  );

export type RecordView = z.infer<typeof recordViewSchema>;

/** Keys the record carries itself (response), in response order around the custom fields. */
export const leadingViewKeys = ["_id", "dataId", "dataTypeId", "data_type", "hubId"] as const;
export const trailingViewKeys = ["organizationId", "createdBy", "createdTime", "updatedTime"] as const;
export const systemViewKeys: readonly string[] = [...leadingViewKeys, ...trailingViewKeys];

/** Keys a write body may carry besides custom fields. */
export const envelopeKeys = ["dataTypeId", "dataTypeName", "hubId", "dataId"] as const;

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("Record", recordViewSchema);
component("RecordInput", recordCreateSchema);
component("RecordReplace", recordReplaceSchema);
component("RecordPatch", recordPatchSchema);
