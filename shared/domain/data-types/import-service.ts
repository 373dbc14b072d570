import type { Caller } from "#shared/domain/caller";
import { type ImportError, type ImportState, MAX_IMPORT_ERRORS } from "#shared/domain/data-types/import-state";
import {
  cutPage,
  EXPORT_CONTENT_TYPE,
  exportHeaderSchema,
  exportRecordSchema,
  headerOf,
  IMPORT_PAGE_BYTES,
  importRecordId,
  type ImportRequest,
  type ImportStepMessage,
  ROLLBACK_PAGE_RECORDS,
} from "#shared/domain/data-types/legacy-import";
import { dataTypeIssues, normalizeFields, relationTargetIds } from "#shared/domain/data-types/rules";
import { type DataType, type DataTypeView, dataTypeInputSchema } from "#shared/domain/data-types/schema";
import {
  type DataTypeStore,
  MAX_RELATED_DATA_TYPES,
  MAX_STORED_BYTES,
  type ReadVersion,
  type VersionedDataType,
} from "#shared/domain/data-types/service";
import { toDataTypeView } from "#shared/domain/data-types/view";
import { AppError, type FieldIssue, ForbiddenError, ValidationError } from "#shared/domain/errors";
import { DEFAULT_MAX_IMPORT_BYTES, exportTooLarge, type ImportLimits } from "#shared/domain/usage/import-quota";
import { newId } from "#shared/domain/ids";
import { formatDateTimeUtc } from "#shared/domain/time";
import { parseWith, zodIssues } from "#shared/domain/validation";

/**
 * The import from the earlier version (docs/api/legacy-import.md). `uploadTarget` hands out a presigned
 * upload form; `start` reads the export's header, creates the data type locked with its import state
 * and queues step 0; `runStep` is the background worker's step: one page of records, the finish
 * (unlock, delete a moved source) or one page of the rollback of a failed import. Steps are numbered;
 * a step runs only while it is the stored one and ends with a conditional move to the next, so a
 * redelivered or duplicated message never runs a step twice, and a page that ran but did not commit
 * runs again and finds its records already written (deterministic `_id`s, writes conditional on absence).
 */

const noUpload = () =>
  ValidationError.single("source.uploadId", "names no uploaded export: POST the file to the url of POST /data-type/import/upload first");

/** `type/subtype` of a Content-Type, lowercased, without parameters. */
const mediaType = (contentType: string | undefined) => contentType?.split(";")[0]?.trim().toLowerCase();

/** The uploaded export in the file bucket, under the organization's prefix. */
export interface ImportSource {
  /** A presigned POST (form `url` and `fields`) that accepts only an object of 1 to `maxBytes` bytes with `contentType`. */
  uploadTarget(
    organizationId: string,
    uploadId: string,
    rules: { maxBytes: number; contentType: string },
  ): Promise<{ url: string; fields: Record<string, string>; expiresInSeconds: number }>;
  /** The uploaded object's size, content type and version (HeadObject); undefined when nothing was uploaded under this id. */
  describe(organizationId: string, uploadId: string): Promise<{ sizeBytes: number; contentType?: string; versionId?: string } | undefined>;
  /** Up to `length` bytes from `offset` (of `versionId` when given); undefined when nothing was uploaded under this id. */
  read(
    organizationId: string,
    uploadId: string,
    range: { offset: number; length: number },
    versionId?: string,
  ): Promise<{ bytes: Buffer; sizeBytes: number; versionId?: string } | undefined>;
  remove(organizationId: string, uploadId: string, versionId?: string): Promise<void>;
}

export interface ImportQueue {
  send(message: ImportStepMessage): Promise<void>;
}

/** The import state on the data type item; moves never change the type's `version` (record writes check it). */
export interface ImportStateStore {
  /** Consistent read of the type item. */
  find(organizationId: string, dataTypeId: string): Promise<VersionedDataType | undefined>;
  /** Replaces the import state if it is still at `fromStep`; `unlock` also clears `locked`. False when another delivery moved it. */
  advance(organizationId: string, dataTypeId: string, fromStep: number, next: ImportState, unlock: boolean): Promise<boolean>;
}

/** The records area's writes for the import (shared/domain/records/service.ts). */
export interface ImportRecordWriter {
  importRecord(
    type: VersionedDataType,
    draft: { _id: string; dataId: unknown; hubId: string | null | undefined; values: Record<string, unknown>; createdBy: string },
  ): Promise<"created" | "existed">;
  removeSome(organizationId: string, dataTypeId: string, limit: number): Promise<number>;
}

/** The plan limits of imports (shared/domain/usage/import-quota.ts, shared/store/import-quota-store.ts). */
export interface ImportQuota {
  limits(organizationId: string): Promise<ImportLimits>;
  /** Takes a slot and charges `records` to the month; throws the 429 when the cap or the quota has no room. */
  take(organizationId: string, dataTypeId: string, records: number, limits: ImportLimits, now: Date): Promise<void>;
  /** Keeps the slot of an import that is still running. */
  renew(organizationId: string, dataTypeId: string, now: Date): Promise<void>;
  /** Settles the charge at `written` records, gives back the rest and frees the slot (a second call changes nothing). */
  end(organizationId: string, dataTypeId: string, startedTime: string, written: number, outcome: "done" | "failed"): Promise<void>;
}

export interface LegacyImportDependencies {
  dataTypes: Pick<DataTypeStore, "create" | "findById">;
  imports: ImportStateStore;
  source: ImportSource;
  queue: ImportQueue;
  records: ImportRecordWriter;
  /** Absent: no plan limits (tests of the steps alone). */
  quota?: ImportQuota;
  now?: () => Date;
  /** Records written at once within a page: where the adaptive limit starts, and its bounds. */
  concurrency?: { initial?: number; min?: number; max?: number };
  /** Waits before an item is retried (tests pass a faster one). */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Records per page (default IMPORT_PAGE_RECORDS): the steps, their redelivery and their rollback
   * are the same at any size, so tests of those run small pages.
   */
  pageRecords?: number;
}

export type StepOutcome = "advanced" | "finished" | "failed" | "ignored" | "early";

/** The header (line 1) may take at most this many bytes. */
const MAX_HEADER_BYTES = 1024 * 1024;

const terminal = (state: ImportState) => state.phase === "done" || state.phase === "failed";

/**
 * A write the table refused for load, not for its content: a transaction still cancelled by
 * conflicts after its own retries (409 `sys-410`), throttling, or the service unavailable (503).
 * Such an item is retried; it never fails the import.
 */
export function isTableBackpressure(error: unknown): boolean {
  if (error instanceof AppError) return error.failedCode === "sys-410" || error.statusCode === 503;
  if (!(error instanceof Error)) return false;
  if (
    [
      "ThrottlingException",
      "ProvisionedThroughputExceededException",
      "RequestLimitExceeded",
      "TransactionConflictException",
      "InternalServerError",
    ].includes(error.name)
  )
    return true;
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons;
  return (
    error.name === "TransactionCanceledException" &&
    (reasons ?? []).every((reason) =>
      ["None", "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"].includes(reason.Code ?? "None"),
    )
  );
}

/**
 * Additive-increase, multiplicative-decrease limit of writes in flight (as TCP's congestion window):
 * each write that succeeds adds 1/limit (about one more lane per round of writes), each write the
 * table pushes back halves it (at most once per round, so one burst of refusals is one decrease).
 */
export class AdaptiveLimit {
  private window: number;
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  private lastDecrease = 0;
  private completed = 0;
  /** The lowest and highest limit seen, and how many decreases: reported by the import benchmark. */
  readonly stats = { lowest: 0, highest: 0, decreases: 0 };

  constructor(
    initial: number,
    private readonly min: number,
    private readonly max: number,
  ) {
    this.window = initial;
    this.stats.lowest = initial;
    this.stats.highest = initial;
  }

  get limit(): number {
    return Math.max(this.min, Math.floor(this.window));
  }

  async acquire(): Promise<void> {
    while (this.inFlight >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight += 1;
  }

  release(): void {
    this.inFlight -= 1;
    this.completed += 1;
    this.waiting.shift()?.();
  }

  succeeded(): void {
    this.window = Math.min(this.max, this.window + 1 / this.limit);
    this.stats.highest = Math.max(this.stats.highest, this.limit);
    // A grown window lets waiting writes in (each re-checks the limit).
    for (let free = this.limit - this.inFlight; free > 0 && this.waiting.length > 0; free -= 1) this.waiting.shift()?.();
  }

  pushedBack(): void {
    if (this.completed - this.lastDecrease < this.limit) return;
    this.lastDecrease = this.completed;
    this.window = Math.max(this.min, this.window / 2);
    this.stats.lowest = Math.min(this.stats.lowest, this.limit);
    this.stats.decreases += 1;
  }
}

/** An item the table pushed back this many times in a row fails the step (SQS redelivers it; written records are found again), never the import. */
const MAX_ITEM_ATTEMPTS = 12;

/** Runs `work` over `items` under the adaptive `limit`; an item the table pushes back is retried after a jittered backoff. */
async function eachAdaptive<T>(
  items: readonly T[],
  limit: AdaptiveLimit,
  sleep: (ms: number) => Promise<void>,
  work: (item: T) => Promise<void>,
): Promise<void> {
  await Promise.all(
    items.map(async (item) => {
      for (let attempt = 0; ; attempt += 1) {
        await limit.acquire();
        try {
          await work(item);
          limit.succeeded();
          return;
        } catch (error) {
          if (!isTableBackpressure(error) || attempt + 1 >= MAX_ITEM_ATTEMPTS) throw error;
          limit.pushedBack();
        } finally {
          limit.release();
        }
        await sleep(Math.random() * Math.min(2000, 50 * 2 ** attempt));
      }
    }),
  );
}

export function createLegacyImportService(dependencies: LegacyImportDependencies) {
  const { dataTypes, imports, source, queue, records, quota } = dependencies;
  const now = dependencies.now ?? (() => new Date());
  const sleep = dependencies.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  // One limit per warm worker: what the table took on the last page is where the next one starts.
  const writes = new AdaptiveLimit(
    dependencies.concurrency?.initial ?? 8,
    dependencies.concurrency?.min ?? 1,
    dependencies.concurrency?.max ?? 64,
  );

  /** The header's data type as today's input, checked by every create rule (primaryKey allowed); issues name `export.dataType.…`. */
  async function importedType(organizationId: string, headerText: string) {
    let json: unknown;
    try {
      json = JSON.parse(headerText);
    } catch {
      throw ValidationError.single("export", "line 1 of the export must be the JSON header with the data type (docs/api/legacy-import.md)");
    }
    const header = exportHeaderSchema.safeParse(json);
    if (!header.success) throw new ValidationError(zodIssues(header.error, "export"));
    const input = parseWith(dataTypeInputSchema, header.data.dataType, "export.dataType");
    const targetIds = relationTargetIds(input);
    if (targetIds.length > MAX_RELATED_DATA_TYPES)
      throw ValidationError.single("export.dataType.fields", `relation fields may name at most ${MAX_RELATED_DATA_TYPES} other data types`);
    const relationTargets = new Map<string, DataType>();
    const related: ReadVersion[] = [];
    for (const found of await Promise.all(targetIds.map((id) => dataTypes.findById(organizationId, id)))) {
      if (!found) continue;
      relationTargets.set(found.dataType._id, found.dataType);
      related.push({ dataTypeId: found.dataType._id, version: found.version });
    }
    const issues = dataTypeIssues(input, { relationTargets, legacyImport: true });
    if (issues.length > 0) throw new ValidationError(issues.map((issue) => ({ ...issue, field: `export.dataType.${issue.field}` })));
    return { input, fields: normalizeFields(input.fields), related, total: header.data.recordCount };
  }

  /** Moves the import into its rollback: the records written so far are deleted, then the type unlocks as failed. */
  function failing(state: ImportState, errors: ImportError[], processed = state.processed): ImportState {
    const first = [...errors].sort((a, b) => a.line - b.line).slice(0, MAX_IMPORT_ERRORS);
    return {
      ...state,
      phase: "rollingBack",
      step: state.step + 1,
      processed,
      errors: first,
      message: `The import failed at line ${first[0]?.line ?? state.line}; the records written so far are being removed.`,
    };
  }

  async function importPage(found: VersionedDataType, state: ImportState): Promise<ImportState> {
    const { dataType } = found;
    let page: ReturnType<typeof cutPage>;
    if (state.byteOffset >= state.sizeBytes) {
      page = { lines: [], nextLine: state.line, nextByteOffset: state.byteOffset, atEnd: true };
    } else {
      const chunk = await source.read(
        dataType.organizationId,
        state.uploadId,
        { offset: state.byteOffset, length: IMPORT_PAGE_BYTES },
        state.versionId,
      );
      if (!chunk)
        return failing(state, [
          { line: state.line, message: "the uploaded export is gone (deleted or expired) before the import finished" },
        ]);
      page = cutPage(chunk.bytes, state, state.sizeBytes, dependencies.pageRecords);
      if (!page) return failing(state, [{ line: state.line, message: `line ${state.line} is longer than ${IMPORT_PAGE_BYTES} bytes` }]);
    }
    const problems: ImportError[] = [];
    await eachAdaptive(page.lines, writes, sleep, async ({ line, text }) => {
      let parsed: ReturnType<typeof exportRecordSchema.safeParse>;
      try {
        parsed = exportRecordSchema.safeParse(JSON.parse(text));
      } catch {
        problems.push({ line, message: "not a JSON object" });
        return;
      }
      if (!parsed.success) {
        for (const issue of zodIssues(parsed.error)) problems.push({ line, field: issue.field, message: issue.message });
        return;
      }
      const record = parsed.data;
      const dataId = typeof record.dataId === "string" ? { dataId: record.dataId } : {};
      try {
        await records.importRecord(found, {
          _id: importRecordId(dataType._id, line),
          dataId: record.dataId,
          hubId: record.hubId,
          values: record.values,
          createdBy: dataType.createdBy,
        });
      } catch (error) {
        if (error instanceof ValidationError) {
          for (const issue of error.errors as FieldIssue[]) problems.push({ line, ...dataId, field: issue.field, message: issue.message });
        } else if (error instanceof AppError && error.statusCode === 409 && !isTableBackpressure(error)) {
          problems.push({ line, ...dataId, message: error.message });
        } else throw error;
      }
    });
    const processed = state.processed + page.lines.length;
    if (problems.length > 0) return failing(state, problems);
    if (processed > state.total || (page.atEnd && processed !== state.total)) {
      return failing(
        state,
        [
          {
            line: page.nextLine,
            message: `the export holds ${page.atEnd ? processed : `more than ${state.total}`} records; its header announces ${state.total}`,
          },
        ],
        processed,
      );
    }
    return {
      ...state,
      phase: page.atEnd ? "finishing" : "importing",
      step: state.step + 1,
      line: page.nextLine,
      byteOffset: page.nextByteOffset,
      processed,
    };
  }

  async function finish(dataType: DataType, state: ImportState): Promise<ImportState> {
    if (state.mode === "move") await source.remove(dataType.organizationId, state.uploadId, state.versionId);
    return {
      ...state,
      phase: "done",
      step: state.step + 1,
      message: `Imported ${state.processed} records.`,
      finishedTime: formatDateTimeUtc(now()),
    };
  }

  async function rollBack(dataType: DataType, state: ImportState): Promise<ImportState> {
    const found = await records.removeSome(dataType.organizationId, dataType._id, ROLLBACK_PAGE_RECORDS);
    if (found > 0) return { ...state, step: state.step + 1 };
    return {
      ...state,
      phase: "failed",
      step: state.step + 1,
      message: `The import failed at line ${state.errors[0]?.line ?? state.line} and was rolled back: the data type has no records. Fix the export, delete this data type (its name stays taken while it exists) and import again.`,
      finishedTime: formatDateTimeUtc(now()),
    };
  }

  return {
    /** The adaptive write limit's lowest and highest value and its decreases so far (the import benchmark prints them). */
    writeLimitStats: () => ({ ...writes.stats, current: writes.limit }),

    /** A fresh upload id and the presigned POST of its object (the organization's import prefix), bounded by the plan's export size. */
    async uploadTarget(caller: Caller) {
      const uploadId = newId(now());
      const maxBytes = (await quota?.limits(caller.organizationId))?.maxBytes ?? DEFAULT_MAX_IMPORT_BYTES;
      const target = await source.uploadTarget(caller.organizationId, uploadId, { maxBytes, contentType: EXPORT_CONTENT_TYPE });
      return {
        uploadId,
        method: "POST" as const,
        url: target.url,
        fields: target.fields,
        contentType: EXPORT_CONTENT_TYPE,
        maxBytes,
        expiresInSeconds: target.expiresInSeconds,
      };
    },

    /** Creates the data type locked, with its import queued; the records follow in the background. */
    async start(caller: Caller, request: ImportRequest): Promise<DataTypeView> {
      // The export may hold records of any hub: only a token that is not limited to hubs may write them all.
      if (caller.hubIds.length > 0)
        throw new ForbiddenError(
          "Your token is limited to some hubs; only a token without hubIds can import from the earlier version.",
          "dt-403",
        );
      const { uploadId } = request.source;
      // The object's size and type before any byte is read: the emulator ignores the POST policy, and an
      // object put under the key by other means never met it.
      const [limits, uploaded] = await Promise.all([
        quota?.limits(caller.organizationId),
        source.describe(caller.organizationId, uploadId),
      ]);
      if (!uploaded) throw noUpload();
      if (uploaded.sizeBytes === 0)
        throw ValidationError.single(
          "export",
          "the uploaded export is empty: line 1 must be the JSON header with the data type (docs/legacy-import.md)",
        );
      if (limits && uploaded.sizeBytes > limits.maxBytes) throw exportTooLarge(limits, uploaded.sizeBytes);
      if (mediaType(uploaded.contentType) !== EXPORT_CONTENT_TYPE) {
        throw ValidationError.single(
          "export",
          `the export was uploaded as ${uploaded.contentType ?? "no content type"}; it must be ${EXPORT_CONTENT_TYPE}: send the fields of POST /data-type/import/upload as they are`,
        );
      }
      const first = await source.read(caller.organizationId, uploadId, { offset: 0, length: MAX_HEADER_BYTES }, uploaded.versionId);
      if (!first) throw noUpload();
      const header =
        headerOf(first.bytes) ??
        (first.bytes.length >= first.sizeBytes ? { text: first.bytes.toString("utf8"), recordsOffset: first.sizeBytes } : undefined);
      if (!header) throw ValidationError.single("export", `line 1 of the export (the data type) must end within ${MAX_HEADER_BYTES} bytes`);
      const { input, fields, related, total } = await importedType(caller.organizationId, header.text);
      const time = now();
      const dataType: DataType = {
        _id: newId(time),
        name: input.name,
        fields,
        limitUser: input.limitUser,
        commonData: input.commonData ?? false,
        uniqueTogether: input.uniqueTogether,
        extends: null,
        provider: "internal",
        providerConfig: null,
        locked: true,
        // Spec Versioning 4: titles keep the earlier version's no-space rule until the type is first saved here.
        titleRule: "no-space",
        import: {
          mode: request.mode,
          phase: "importing",
          step: 0,
          uploadId,
          ...(first.versionId !== undefined ? { versionId: first.versionId } : {}),
          sizeBytes: first.sizeBytes,
          line: 2,
          byteOffset: header.recordsOffset,
          processed: 0,
          total,
          errors: [],
          startedTime: formatDateTimeUtc(time),
        },
        createdBy: caller.userId,
        organizationId: caller.organizationId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
      };
      const bytes = Buffer.byteLength(JSON.stringify(dataType), "utf8");
      if (bytes > MAX_STORED_BYTES)
        throw ValidationError.single(
          "export.dataType",
          `the data type is too large to store (${bytes} bytes of JSON, at most ${MAX_STORED_BYTES})`,
        );
      const state = dataType.import as ImportState;
      if (quota && limits) await quota.take(caller.organizationId, dataType._id, total, limits, time);
      try {
        await dataTypes.create(dataType, related);
      } catch (error) {
        await quota?.end(caller.organizationId, dataType._id, state.startedTime, 0, "failed");
        throw error;
      }
      try {
        await queue.send({ kind: "legacyImportStep", organizationId: caller.organizationId, dataTypeId: dataType._id, step: 0 });
      } catch (error) {
        // Nothing will run it: unlock as failed rather than leave the type locked for good.
        await imports.advance(
          caller.organizationId,
          dataType._id,
          0,
          {
            ...state,
            phase: "failed",
            step: 1,
            message: "The import could not be queued; import again.",
            finishedTime: formatDateTimeUtc(now()),
          },
          true,
        );
        await quota?.end(caller.organizationId, dataType._id, state.startedTime, 0, "failed");
        throw error;
      }
      return toDataTypeView(dataType);
    },

    /**
     * One step of an import. The next step's message is sent before this step commits (a
     * conditional move from this step): a delivery that dies in between is redelivered, runs the
     * step again (its writes find themselves) and sends again; the duplicate is ignored by step.
     * Throws when the step should be retried (SQS redelivers the message); on the last delivery
     * (`receiveCount >= maxReceiveCount`) a failing page fails the import instead.
     */
    async runStep(message: ImportStepMessage, delivery: { receiveCount: number; maxReceiveCount: number }): Promise<StepOutcome> {
      let found = await imports.find(message.organizationId, message.dataTypeId);
      // Sent just before its predecessor committed: give the commit a moment before handing the message back.
      for (let wait = 0; wait < 5 && found?.dataType.import && message.step > found.dataType.import.step; wait++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        found = await imports.find(message.organizationId, message.dataTypeId);
      }
      const state = found?.dataType.import;
      if (!found || !state || terminal(state) || message.step < state.step) return "ignored";
      if (message.step > state.step) return "early";
      await quota?.renew(message.organizationId, message.dataTypeId, now());
      let next: ImportState;
      try {
        if (state.phase === "importing") next = await importPage(found, state);
        else if (state.phase === "finishing") next = await finish(found.dataType, state);
        else next = await rollBack(found.dataType, state);
      } catch (error) {
        if (state.phase !== "importing" || delivery.receiveCount < delivery.maxReceiveCount) throw error;
        next = failing(state, [
          {
            line: state.line,
            message: `the page starting at line ${state.line} failed ${delivery.receiveCount} times on the server; retry the import later`,
          },
        ]);
      }
      if (!terminal(next)) await queue.send({ ...message, step: next.step });
      if (!(await imports.advance(message.organizationId, message.dataTypeId, state.step, next, terminal(next)))) return "ignored";
      // A failed import is charged the records it wrote before failing (removed again by its rollback).
      if (terminal(next))
        await quota?.end(
          message.organizationId,
          message.dataTypeId,
          next.startedTime,
          next.processed,
          next.phase === "done" ? "done" : "failed",
        );
      return next.phase === "done" ? "finished" : next.phase === "failed" ? "failed" : "advanced";
    },
  };
}

export type LegacyImportService = ReturnType<typeof createLegacyImportService>;
