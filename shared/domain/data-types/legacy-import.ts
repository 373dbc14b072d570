import { createHash } from "node:crypto";
import * as z from "zod/mini";
import { importModes } from "#shared/domain/data-types/import-state";
import { fieldInputSchema } from "#shared/domain/data-types/schema";
import { component, idSchema, storableNumber } from "#shared/domain/schemas";

/**
 * The import from the earlier version (spec Versioning 2–4), as pure rules: the export format
 * (docs/api/legacy-import.md), the import request, the import state kept on the data type item, the
 * view clients see, and the page arithmetic of the background worker. No I/O here.
 */

export const EXPORT_FORMAT = "field-operations-export";
export const EXPORT_FORMAT_VERSION = 2;

/** Records written per worker step (one SQS message). */
export const IMPORT_PAGE_RECORDS = 500;
/** Bytes read from the export per step; a single line may not be longer. */
export const IMPORT_PAGE_BYTES = 4 * 1024 * 1024;
/** Records deleted per rollback step of a failed import. */
export const ROLLBACK_PAGE_RECORDS = 100;

/** The earlier version named the text type `string`; everything else is today's field model. */
const legacyFieldSchema = z.pipe(
  z.transform((field: unknown) =>
    typeof field === "object" && field !== null && (field as { type?: unknown }).type === "string" ? { ...field, type: "text" } : field,
  ),
  fieldInputSchema,
);

/** Line 1 of an export: the data type as the earlier version stored it, and how many record lines follow. */
export const exportHeaderSchema = z.object({
  format: z.literal(EXPORT_FORMAT),
  formatVersion: z.literal(EXPORT_FORMAT_VERSION),
  dataType: z.object({
    name: z.string(),
    fields: z.array(legacyFieldSchema).check(z.minLength(1)),
    limitUser: z._default(z.boolean(), false),
    commonData: z._default(z.boolean(), false),
    uniqueTogether: z._default(z.array(z.array(z.string())), []),
  }),
  recordCount: storableNumber().check(z.int(), z.minimum(0), z.maximum(10_000_000)),
});

export type ExportHeader = z.infer<typeof exportHeaderSchema>;

/** Every following line: one record (`dataId` is the title, or the primaryKey value of a type that predates title). */
export const exportRecordSchema = z.strictObject({
  dataId: z.unknown(),
  hubId: z.nullish(z.string().check(z.minLength(1), z.maxLength(64))),
  values: z._default(z.record(z.string(), z.unknown()), {}),
});

export type ExportRecord = z.infer<typeof exportRecordSchema>;

export const importRequestSchema = z.strictObject({
  mode: z
    .enum(importModes)
    .check(
      z.describe("`copy` keeps the uploaded export after a successful import; `move` deletes it. A failed import keeps it either way."),
    ),
  source: z
    .strictObject({
      uploadId: idSchema.check(z.describe("The `uploadId` answered by POST /data-type/import/upload, whose form received the export.")),
    })
    .check(z.describe("The uploaded export (JSON lines, docs/api/legacy-import.md).")),
});

export type ImportRequest = z.infer<typeof importRequestSchema>;

/** One SQS message of the import queue: run step `step` of this data type's import. */
export const importStepMessageSchema = z.object({
  kind: z.literal("legacyImportStep"),
  organizationId: z.string().check(z.minLength(1)),
  dataTypeId: idSchema,
  step: z.number().check(z.int(), z.minimum(0)),
});

export type ImportStepMessage = z.infer<typeof importStepMessageSchema>;

/** The content type of an export (JSON lines): the upload's POST policy requires it and the import checks it. */
export const EXPORT_CONTENT_TYPE = "application/x-ndjson";

export const importUploadSchema = z.object({
  uploadId: idSchema,
  method: z.literal("POST").check(z.describe("A browser-style form upload (multipart/form-data) to `url`, no Authorization header.")),
  url: z.string().check(z.describe("Where to POST the form (the file bucket).")),
  fields: z
    .record(z.string(), z.string())
    .check(
      z.describe(
        "Form fields to send exactly as given (key, Content-Type, Policy, signature…), followed by the export as the last field, `file`. S3 refuses (403) a form whose file is larger than `maxBytes` or empty, whose Content-Type differs, or that arrives after `expiresInSeconds`.",
      ),
    ),
  contentType: z.literal(EXPORT_CONTENT_TYPE).check(z.describe("The Content-Type the upload must declare (it is among `fields`).")),
  maxBytes: z
    .number()
    .check(z.describe("The largest export the upload and the import take: the plan's `maxImportBytes` (1 GiB when the plan sets none).")),
  expiresInSeconds: z.number(),
});

/**
 * The `_id` of the record on `line` of an import: the same on every delivery of its page, so a
 * redelivered page finds its own records (the write is conditional on absence) and skips them.
 * Laid out like every id: the import's start second, then 16 hex digits of a hash.
 */
export function importRecordId(dataTypeId: string, line: number): string {
  const seconds = dataTypeId.slice(0, 8);
  return `${seconds}${createHash("sha256").update(`${dataTypeId}:${line}`).digest("hex").slice(0, 16)}`;
}

export interface PageLine {
  line: number;
  text: string;
}

export interface ExportPage {
  lines: PageLine[];
  /** Where the next page starts. */
  nextLine: number;
  nextByteOffset: number;
  /** True when the page reaches the end of the export. */
  atEnd: boolean;
}

/**
 * Cuts the next page out of `chunk` (the export's bytes from `byteOffset`, at most IMPORT_PAGE_BYTES):
 * complete lines only (the last line of the file needs no newline), at most `maxRecords` non-blank
 * ones. Undefined when the chunk holds no complete line although the export goes on (a line longer
 * than a page).
 */
export function cutPage(
  chunk: Buffer,
  start: { line: number; byteOffset: number },
  sizeBytes: number,
  maxRecords = IMPORT_PAGE_RECORDS,
): ExportPage | undefined {
  const reachesEnd = start.byteOffset + chunk.length >= sizeBytes;
  const lines: PageLine[] = [];
  let position = 0;
  let line = start.line;
  while (position < chunk.length && lines.length < maxRecords) {
    const newline = chunk.indexOf(0x0a, position);
    if (newline < 0 && !reachesEnd) break;
    const end = newline < 0 ? chunk.length : newline;
    const text = chunk.subarray(position, end).toString("utf8").replace(/\r$/, "");
    if (text.trim() !== "") lines.push({ line, text });
    line += 1;
    position = newline < 0 ? chunk.length : newline + 1;
  }
  if (position === 0 && chunk.length > 0) return undefined;
  const nextByteOffset = start.byteOffset + position;
  return { lines, nextLine: line, nextByteOffset, atEnd: nextByteOffset >= sizeBytes };
}

/** The header line of an export: its text and the byte offset of line 2; undefined without a newline in `chunk`. */
export function headerOf(chunk: Buffer): { text: string; recordsOffset: number } | undefined {
  const newline = chunk.indexOf(0x0a);
  if (newline < 0) return undefined;
  return { text: chunk.subarray(0, newline).toString("utf8").replace(/\r$/, ""), recordsOffset: newline + 1 };
}

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("DataTypeImportRequest", importRequestSchema);
component("DataTypeImportUpload", importUploadSchema);
