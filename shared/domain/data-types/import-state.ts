import * as z from "zod/mini";
import { component } from "#shared/domain/schemas";

/**
 * The state of an import from the earlier version, kept on the imported data type's item, and what
 * clients see of it (`import` on GET /data-type/{id}). The rules of the import itself live in
 * legacy-import.ts; this file has no dependency on the data type schema, which embeds it.
 */

export const importModes = ["copy", "move"] as const;

/** The import status lists at most this many problems. */
export const MAX_IMPORT_ERRORS = 20;

export const importErrorSchema = z.object({
  line: z.number().check(z.describe("1-based line of the export (line 1 is the header).")),
  dataId: z.optional(z.string()),
  field: z.optional(z.string()),
  message: z.string(),
});

export type ImportError = z.infer<typeof importErrorSchema>;

/**
 * Where the worker is: `importing` pages of records, `finishing` (all written: delete a moved
 * source, unlock), `rollingBack` (failed: delete the records written so far, then unlock), and
 * the terminal `done` / `failed`. `step` numbers the SQS messages: a message runs only when its
 * step is the stored one, and moving on is a conditional update from that step.
 */
export const importPhases = ["importing", "finishing", "rollingBack", "done", "failed"] as const;
export type ImportPhase = (typeof importPhases)[number];

export const importStateSchema = z.object({
  mode: z.enum(importModes),
  phase: z.enum(importPhases),
  step: z.number(),
  uploadId: z.string(),
  versionId: z.optional(z.string()),
  sizeBytes: z.number(),
  /** Next record line: its 1-based number and its byte offset in the export. */
  line: z.number(),
  byteOffset: z.number(),
  processed: z.number(),
  total: z.number(),
  errors: z.array(importErrorSchema),
  message: z.optional(z.string()),
  startedTime: z.string(),
  finishedTime: z.optional(z.string()),
});

export type ImportState = z.infer<typeof importStateSchema>;

export const importStatuses = ["queued", "running", "done", "failed"] as const;

export const importViewSchema = z
  .object({
    status: z.enum(importStatuses),
    mode: z.enum(importModes),
    processed: z.number().check(z.describe("Records written so far (on failure: how far the import got; those records were removed).")),
    total: z.number().check(z.describe("Records the export's header announces.")),
    errors: z
      .array(importErrorSchema)
      .check(z.describe(`Why the import failed: at most ${MAX_IMPORT_ERRORS} problems, each with its line.`)),
    message: z.optional(z.string()),
    startedTime: z.string(),
    finishedTime: z.optional(z.string()),
  })
  .check(z.describe("Present on data types imported from the earlier version."));

export type ImportView = z.infer<typeof importViewSchema>;

export function importStatusOf(state: Pick<ImportState, "phase" | "step">): ImportView["status"] {
  if (state.phase === "done") return "done";
  if (state.phase === "failed") return "failed";
  return state.phase === "importing" && state.step === 0 ? "queued" : "running";
}

export function toImportView(state: ImportState): ImportView {
  return {
    status: importStatusOf(state),
    mode: state.mode,
    processed: state.processed,
    total: state.total,
    errors: state.errors,
    ...(state.message !== undefined ? { message: state.message } : {}),
    startedTime: state.startedTime,
    ...(state.finishedTime !== undefined ? { finishedTime: state.finishedTime } : {}),
  };
}

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("DataTypeImport", importViewSchema);
