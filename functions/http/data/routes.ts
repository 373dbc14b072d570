import * as z from "zod/mini";
import {
  recordCreateSchema,
  recordDataIdParamsSchema,
  recordGetQuerySchema,
  recordListQuerySchema,
  recordPatchSchema,
  recordPathParamsSchema,
  recordReplaceSchema,
  recordScopeQuerySchema,
  recordTypeQuerySchema,
  recordViewSchema,
} from "#shared/domain/records/schema";
import { pageBodySchema, successBodySchema, clientText } from "#shared/domain/schemas";
import { defineRoute } from "#shared/http/route";

const recordBody = () => successBodySchema(recordViewSchema);
const restrictedBody = () =>
  z.object({
    status: z.literal(false),
    message: z.string().check(clientText),
    failedCode: z.literal("data-403"),
    restrictedFields: z.array(z.string().check(clientText)),
  });
const tag = "Data source records";

const valueRules = [
  "Value rules (each violation is a 400 naming the field; nothing is stored):",
  "`dataId` letters, digits, `-`, `_` and single inner spaces, 1–200 characters (no spaces on a type imported from the earlier version and not saved since);",
  "text a string (≤ 10,000 characters); number a finite JSON number, 0 or of magnitude 1e-130 to 9007199254740991 (`decimals` caps decimal places); boolean; option one of `optionData`; multiOption an array of distinct options within minSelected/maxSelected;",
  "date `YYYY-MM-DD`, dateTime `YYYY-MM-DD HH:mm[:ss]` or ISO 8601 (no offset = UTC; the same texts validation bounds accept), stored and answered as `YYYY-MM-DD HH:mm:ss` UTC, time `HH:mm` or `HH:mm:ss`; with `inputType: range` also `{ from, to }` (from ≤ to);",
  'geolocation `{ lat, lng }` or `"lat,lng"` (stored as `{ lat, lng }`); phoneNumber `+` and 7–15 digits (spaces and dashes removed);',
  "relation belongsTo one `_id`, belongsToMany an array of at most 20 distinct `_id`s, each id the write brings into the field an existing record of the target data type (hub and vehicle targets: an existing hub/vehicle; user, role, flow: not checked; ids the field already held are not checked again, so a target deleted since never blocks an edit); hasOne/hasMany are server-set (resolved on read): sent values are ignored, like `_id`, `data_type`, `organizationId`, `createdBy`, `createdTime` and `updatedTime`, so a record read by GET can be sent back.",
  "Required fields must be present and non-empty; an absent value takes the field's `default`; keys that are not fields of the type are rejected;",
  "`validations.min/max` literal or `{ ref }` (another field of the same record, skipped while it is empty), minInclusive/maxInclusive default true.",
  "Uniqueness (409, failedCode data-001 for dataId, data-002 for unique fields and uniqueTogether, `errors` naming the fields): per hub and type (per type when commonData); multi-value fields compare as sets, an absent boolean counts as false in a combination, a combination with an empty member is not checked. Enforced by guard items in the record's own transaction: concurrent writers never both succeed.",
].join(" ");

const writeNotes =
  "Writes to an external-api data type or an extension (`extends`) type are a 400; to a type locked by an import a 409 (data-004). A write that meets a concurrent change or delete of its data type is a 409 (data-003, retry).";

const lookupNotes =
  "When several hubs of a non-commonData type hold the dataId and no hubId is given: 400 listing the hubs. Records of hubs outside the token's hubIds are not found (404).";

const accessNotes =
  'Field accessibility: fields listed in the token\'s permissionDetails entry `{ permissionName: "view/data", dataTypeId, hiddenFields }` (an entry without dataTypeId applies to every type) are left out; `fields` naming one of them is a 403 `{ status: false, message, failedCode: "data-403", restrictedFields }`. Writes may set hidden fields; their responses leave them out too.';

export const recordRoutes = {
  create: defineRoute({
    operationId: "createRecord",
    method: "POST",
    path: "/data",
    handler: "functions/http/data/create.ts",
    summary: "Create a data source record",
    description: `Body \`{ dataTypeId | dataTypeName, hubId, dataId, <fieldId>: value, … }\`: custom field values sit flat at the top level. An unknown dataTypeId/dataTypeName is a 400 naming it. hubId is required unless the type has commonData true (then it must be absent); it must name an existing hub and, when the token lists hubIds, one of them. ${valueRules} ${writeNotes}`,
    tag,
    permission: "add/data",
    body: recordCreateSchema,
    responses: () => ({
      201: { description: "Created", schema: recordBody() },
      409: {
        description:
          "dataId or a unique value taken (data-001 / data-002), the data type changed meanwhile (data-003, retry) or is locked by an import (data-004).",
        failedCodes: ["data-001", "data-002", "data-003", "data-004"],
      },
    }),
    grants: ["tableWrite"],
    idempotent: true,
  }),
  list: defineRoute({
    operationId: "listRecords",
    method: "GET",
    path: "/data",
    handler: "functions/http/data/list.ts",
    summary: "List or search records, of one data type or of all",
    description: `With dataTypeId or dataTypeName: that type's records (an unknown type is a 404). With neither and no q: the organization's stored records of every data type, newest first (by _id, whose first 8 hex digits are the creation second), one cursor; each item carries dataTypeId and data_type and follows its own type's hidden fields; hub scope as below (hubId, else the token's hubs; common records always qualify; a page may hold fewer than limit items for a hub-limited token: follow nextCursor); \`fields\` is not checked against a type, and naming a field any view/data entry of the token hides is a 403; records stored before this list existed appear once they are next written. With q and no type: the same search across every stored data type of the organization (external-api and extension types excluded), one cursor; each item carries dataTypeId and data_type and follows its own type's searchable and hidden fields; the token's hubs and hubId apply (common records always qualify); \`fields\` is not checked against a type, and naming a field any view/data entry of the token hides is a 403; records written before this search existed are found once they are next written. Without q: records ordered by hub, then dataId. With q: records whose searchable fields (title included) contain, for every word of q, a word starting with it (case- and accent-insensitive; words are runs of letters and digits; only the first 20 distinct words of a record are indexed, words compared on their first 64 characters), ordered by the matched word; hidden fields do not match. Search reads a token index, so its cost grows with the matches, not with the type's size. Pages hold at most \`limit\` items and may hold fewer, or none (the index is read by the longest q word; the other words, hub filters and duplicate words are applied after the page is read): follow nextCursor until it is null. For an external-api type the items are read from its API (GET, 5 s, 1 MB), validated against the type (invalid items left out) and paged here; an unusable answer is a 502 (data-502). ${accessNotes}`,
    tag,
    permission: "view/data",
    query: recordListQuerySchema,
    responses: () => ({
      200: { description: "A page of records", schema: pageBodySchema(recordViewSchema) },
      403: {
        description: "fields names a hidden field (failedCode data-403, with restrictedFields)",
        schema: restrictedBody(),
        failedCodes: ["data-403"],
      },
    }),
    grants: ["tableRead"],
  }),
  getByDataId: defineRoute({
    operationId: "getRecord",
    method: "GET",
    path: "/data/{dataId}",
    handler: "functions/http/data/get.ts",
    summary: "Read a record by its dataId",
    description: `Without dataTypeId/dataTypeName the stored records are looked up by dataId across the organization's types: when more than one type holds it, 400 listing the types (external-api types are only read when named). ${lookupNotes} ${accessNotes}`,
    tag,
    permission: "view/data",
    params: recordDataIdParamsSchema,
    query: recordGetQuerySchema,
    responses: () => ({
      200: { description: "The record", schema: recordBody() },
      403: {
        description: "fields names a hidden field (failedCode data-403, with restrictedFields)",
        schema: restrictedBody(),
        failedCodes: ["data-403"],
      },
    }),
    grants: ["tableRead"],
    versioned: true,
  }),
  getByType: defineRoute({
    operationId: "getRecordOfType",
    method: "GET",
    path: "/data/type/{dataTypeName}/{dataId}",
    handler: "functions/http/data/get-by-type.ts",
    summary: "Read a record by data type name and dataId",
    description: `The data type name is compared case-insensitively; an unknown type is a 404. ${lookupNotes} ${accessNotes}`,
    tag,
    permission: "view/data",
    params: recordPathParamsSchema,
    query: recordTypeQuerySchema,
    responses: () => ({
      200: { description: "The record", schema: recordBody() },
      403: {
        description: "fields names a hidden field (failedCode data-403, with restrictedFields)",
        schema: restrictedBody(),
        failedCodes: ["data-403"],
      },
    }),
    grants: ["tableRead"],
    versioned: true,
  }),
  replace: defineRoute({
    operationId: "replaceRecord",
    method: "PUT",
    path: "/data/type/{dataTypeName}/{dataId}",
    handler: "functions/http/data/replace.ts",
    summary: "Replace a record",
    description: `Full replace of the custom values (omitted fields are cleared or take their default); dataId and hubId omitted mean unchanged, sent they rename or move the record (its guard items, search words and key move in the same transaction). Every rule runs again. A concurrent change of the record is a 409 (sys-410). ${valueRules} ${writeNotes} ${lookupNotes}`,
    tag,
    permission: "edit/data",
    params: recordPathParamsSchema,
    query: recordScopeQuerySchema,
    body: recordReplaceSchema,
    responses: () => ({
      200: { description: "The updated record", schema: recordBody() },
      409: {
        description:
          "dataId or a unique value taken (data-001 / data-002), the data type changed meanwhile (data-003, retry) or is locked by an import (data-004).",
        failedCodes: ["data-001", "data-002", "data-003", "data-004"],
      },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  patch: defineRoute({
    operationId: "patchRecord",
    method: "PATCH",
    path: "/data/type/{dataTypeName}/{dataId}",
    handler: "functions/http/data/patch.ts",
    summary: "Change some values of a record",
    description: `Keys sent replace the stored values (null clears one); the merged record is checked by every rule, like PUT. Stored values of fields the type no longer has are dropped. ${writeNotes} ${lookupNotes}`,
    tag,
    permission: "edit/data",
    params: recordPathParamsSchema,
    query: recordScopeQuerySchema,
    body: recordPatchSchema,
    responses: () => ({
      200: { description: "The updated record", schema: recordBody() },
      409: {
        description:
          "dataId or a unique value taken (data-001 / data-002), the data type changed meanwhile (data-003, retry) or is locked by an import (data-004).",
        failedCodes: ["data-001", "data-002", "data-003", "data-004"],
      },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  remove: defineRoute({
    operationId: "deleteRecord",
    method: "DELETE",
    path: "/data/type/{dataTypeName}/{dataId}",
    handler: "functions/http/data/delete.ts",
    summary: "Delete a record",
    description: `Removes the record with its guard items, search words and relation links in one transaction. Records that name it in a relation keep the _id (references are not cascaded). ${lookupNotes}`,
    tag,
    permission: "delete/data",
    params: recordPathParamsSchema,
    query: recordScopeQuerySchema,
    responses: () => ({
      200: { description: "Deleted", schema: z.object({ status: z.literal(true), message: z.string().check(clientText) }) },
      409: {
        description: "The data type changed meanwhile (data-003, retry) or is locked by an import (data-004).",
        failedCodes: ["data-003", "data-004"],
      },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
};
