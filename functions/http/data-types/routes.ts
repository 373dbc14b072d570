import * as z from "zod/mini";
import {
  dataTypeInputSchema,
  dataTypeListQuerySchema,
  dataTypeParamsSchema,
  dataTypePatchSchema,
  dataTypeViewSchema,
} from "#shared/domain/data-types/schema";
import { importRequestSchema, importUploadSchema } from "#shared/domain/data-types/legacy-import";
import { pageBodySchema, successBodySchema, clientText } from "#shared/domain/schemas";
import { defineRoute } from "#shared/http/route";

const dataTypeBody = () => successBodySchema(dataTypeViewSchema, "data_type");
const tag = "Data types";

const rules = [
  "Rules (each violation is a 400 naming the field and rule; nothing is stored):",
  "exactly one `title` field (forced to id `dataId`, required, unique, show, searchable), none on an extension type (`extends`);",
  "field ids match ^[A-Za-z][A-Za-z0-9_]*$, are unique and are not record system keys; `required` or its synonym `isRequired` on every other field;",
  "`optionData` only (and required, distinct) on option/multiOption; `validations` keys only where the type supports them, literal bounds of the field's type, `{ ref }` to a field of the same type, min ≤ max;",
  "`relation` exactly on relation fields, target an existing data type of this organization or user|hub|vehicle|role|flow, `via` (hasOne/hasMany) a belongsTo/belongsToMany field of the target pointing back;",
  "at most 5 searchable fields including the title; `uniqueTogether` combinations of ≥ 2 known non-title, non-relation fields, none listed twice;",
  "external-api providers need an absolute http(s) `providerConfig.url` whose host is not a loopback, link-local or private address.",
  "Field `type` values echo the request enumeration (`title`, `text`, `number`, …); the legacy `string` of an old response example is never produced.",
  "`providerConfig.key` is never echoed in full: responses carry `****` plus at most its last 4 characters.",
  "null on any optional attribute (top level, field, `relation`, `validations`, `providerConfig`) is read as absent: its default applies.",
  "`extends` forces `commonData` true: a sent `false` is coerced, not refused.",
  "Server-set keys (`_id`, `locked`, `createdBy`, `organizationId`, `createdTime`, `updatedTime`) are ignored when sent, so a type read by GET can be sent back; any other unknown key is a 400.",
].join(" ");

const updateRules =
  "`commonData` cannot change; `extends` cannot be added or removed (its entity may change); a type already above 5 searchable fields (legacy) may be saved while the count does not grow; a legacy `primaryKey` type keeps its primaryKey field and cannot add a title. A type locked by an import from the earlier version answers 409 (failedCode dt-003) until it is ready. Renaming to a name another type uses is a 409 (dt-001). Sending back the masked `providerConfig.key` keeps the stored key. The first save ends the earlier version's no-space title rule.";

export const dataTypeRoutes = {
  create: defineRoute({
    operationId: "createDataType",
    method: "POST",
    path: "/data-type",
    handler: "functions/http/data-types/create.ts",
    summary: "Create a data type",
    description: `${rules} A name already used in the organization (case-insensitive) is a 409 (failedCode dt-001); a second extension type for the same entity is a 409 (dt-002).`,
    tag,
    permission: "add/data-type",
    body: dataTypeInputSchema,
    responses: () => ({
      201: { description: "Created", schema: dataTypeBody() },
      409: { description: "Name or extension entity already taken (dt-001 / dt-002).", failedCodes: ["dt-001", "dt-002"] },
    }),
    grants: ["tableRead", "tableWrite"],
    idempotent: true,
  }),
  list: defineRoute({
    operationId: "listDataTypes",
    method: "GET",
    path: "/data-types",
    handler: "functions/http/data-types/list.ts",
    summary: "List data types",
    description:
      "Sorted by name (case-insensitive). `name` filters by a case-insensitive name prefix. Pages hold at most `limit` types; follow `nextCursor` until it is null.",
    tag,
    permission: "view/data-type",
    query: dataTypeListQuerySchema,
    responses: () => ({ 200: { description: "A page of data types", schema: pageBodySchema(dataTypeViewSchema, "data_types") } }),
    grants: ["tableRead"],
  }),
  get: defineRoute({
    operationId: "getDataType",
    method: "GET",
    path: "/data-type/{dataTypeId}",
    handler: "functions/http/data-types/get.ts",
    summary: "Read a data type",
    description: "Also answers at `/data-type/{dataTypeId}/` (the spec's form, with a trailing slash).",
    tag,
    permission: "view/data-type",
    params: dataTypeParamsSchema,
    responses: () => ({ 200: { description: "The data type", schema: dataTypeBody() } }),
    grants: ["tableRead"],
    versioned: true,
  }),
  replace: defineRoute({
    operationId: "replaceDataType",
    method: "PUT",
    path: "/data-type/{dataTypeId}",
    handler: "functions/http/data-types/replace.ts",
    summary: "Replace a data type",
    description: `Full replace: \`name\` and \`fields\` are required, omitted optional attributes take their defaults (commonData excepted: omitted means unchanged). ${updateRules} ${rules}`,
    tag,
    permission: "edit/data-type",
    params: dataTypeParamsSchema,
    body: dataTypeInputSchema,
    responses: () => ({
      200: { description: "The updated data type", schema: dataTypeBody() },
      409: {
        description: "Locked by an import (dt-003), name/extension taken (dt-001/dt-002), or changed concurrently (sys-410, dt-005).",
        failedCodes: ["dt-001", "dt-002", "dt-003", "dt-005", "sys-410"],
      },
    }),
    grants: ["tableRead", "tableWrite"],
    versioned: true,
  }),
  patch: defineRoute({
    operationId: "patchDataType",
    method: "PATCH",
    path: "/data-type/{dataTypeId}",
    handler: "functions/http/data-types/patch.ts",
    summary: "Change some attributes of a data type",
    description: `Top-level attributes sent replace the stored ones (\`fields\` and \`uniqueTogether\` as whole arrays); the merged type is validated as a whole, like PUT. ${updateRules}`,
    tag,
    permission: "edit/data-type",
    params: dataTypeParamsSchema,
    body: dataTypePatchSchema,
    responses: () => ({
      200: { description: "The updated data type", schema: dataTypeBody() },
      409: {
        description: "Locked by an import (dt-003), name/extension taken (dt-001/dt-002), or changed concurrently (sys-410, dt-005).",
        failedCodes: ["dt-001", "dt-002", "dt-003", "dt-005", "sys-410"],
      },
    }),
    grants: ["tableRead", "tableWrite"],
    versioned: true,
  }),
  remove: defineRoute({
    operationId: "deleteDataType",
    method: "DELETE",
    path: "/data-type/{dataTypeId}",
    handler: "functions/http/data-types/delete.ts",
    summary: "Delete a data type",
    description:
      "Only a data type without records can be deleted: otherwise 409 (failedCode dt-004). A locked type answers 409 (dt-003). The name and extension entity become free again.",
    tag,
    permission: "delete/data-type",
    params: dataTypeParamsSchema,
    responses: () => ({
      200: { description: "Deleted", schema: z.object({ status: z.literal(true), message: z.string().check(clientText) }) },
      409: { description: "The type still has records (dt-004) or is locked (dt-003).", failedCodes: ["dt-003", "dt-004", "sys-410"] },
    }),
    grants: ["tableRead", "tableWrite"],
    versioned: true,
  }),
  importUpload: defineRoute({
    operationId: "createDataTypeImportUpload",
    method: "POST",
    path: "/data-type/import/upload",
    handler: "functions/http/data-types/import-upload.ts",
    summary: "Get an upload URL for an export of the earlier version",
    description:
      "Step 1 of an import from the earlier version (docs/api/legacy-import.md): answers an `uploadId` and a presigned S3 POST (`url` and form `fields`); POST the export file (JSON lines: the data type, then one record per line) as a multipart/form-data form, the `fields` as given and then the file as `file`, before it expires (`PRESIGN_TTL_SECONDS`, 15 minutes by default), then call POST /data-type/import. The form's policy takes 1 byte up to `maxBytes` (the plan's `maxImportBytes`) with Content-Type `application/x-ndjson`; S3 refuses anything else with a 403. The API never carries the file.",
    tag,
    permission: "add/data-type",
    responses: () => ({ 201: { description: "Where to upload the export", schema: successBodySchema(importUploadSchema) } }),
    // tableRead: the tenant record's plan bounds the upload's size.
    grants: ["tableRead", "importFileUpload"],
  }),
  import: defineRoute({
    operationId: "importDataType",
    method: "POST",
    path: "/data-type/import",
    handler: "functions/http/data-types/import.ts",
    summary: "Import a data type and its records from the earlier version",
    description:
      "Step 2 (docs/api/legacy-import.md): reads the uploaded export's header, creates the data type `locked: true` with `import.status` `queued`, and answers 202 at once; the records are written in the background, in pages of 500, through the import queue. While locked, record writes answer 409 data-004 and data type writes 409 dt-003; reads work. `GET /data-type/{id}` shows `import: { status: queued|running|done|failed, mode, processed, total, errors }`. On success the type unlocks, keeps its primaryKey fields and the no-space title rule until first saved, and `move` deletes the uploaded export (`copy` keeps it). Any bad record fails the import: the records written so far are deleted before the type unlocks with status `failed` and the problems (line, field, message) in `errors`. The header's data type follows the create rules (400 naming `export.dataType.…`), except that a `primaryKey` field may stand in for the title and a type of the earlier version may keep more than 5 searchable fields; a name already taken is a 409 (dt-001); an empty upload, or one whose Content-Type is not `application/x-ndjson`, is a 400 on `export` (the object is checked with a HeadObject before any byte is read). Plan limits (tenant plan: `maxImportBytes`, `maxImportsRunning`, `importRecordsPerMonth`): an export larger than the plan allows is a 400 on `export`; a call while the organization has its plan's imports queued or running is a 429 (import-429); an export whose header's `recordCount` does not fit in what is left of the month's imported records is a 429 (import-quota-429) naming the quota and when it resets (the first instant of the next UTC month). An import is charged its `recordCount` when it starts and, when it ends, keeps the charge of the records it wrote (on failure: the pages written before the failing one); nothing is created by a refused call.",
    tag,
    permission: "add/data-type",
    body: importRequestSchema,
    responses: () => ({
      202: { description: "The data type, locked, with its import queued", schema: dataTypeBody() },
      403: { description: "The token is limited to some hubs (failedCode dt-403).", failedCodes: ["dt-403"] },
      409: { description: "The name is taken (dt-001).", failedCodes: ["dt-001"] },
      429: {
        description:
          "The organization already has its plan's maxImportsRunning imports queued or running (failedCode import-429), or the export's recordCount does not fit in the month's importRecordsPerMonth (failedCode import-quota-429); nothing was created.",
        failedCodes: ["import-429", "import-quota-429"],
      },
    }),
    grants: ["tableRead", "tableWrite", "importFileRead", "importQueueSend"],
  }),
};
