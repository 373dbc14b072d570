import { TooManyRequestsError, ValidationError } from "#shared/domain/errors";
import type { Plan } from "#shared/domain/tenants/plans";
import { runQuotaResetsAt } from "#shared/domain/usage/run-quota";
import { utcMonth } from "#shared/domain/usage/schema";

/**
 * What a tenant's plan lets its imports from the earlier version do (docs/legacy-import.md, "Plan
 * limits"), as pure rules: records written per UTC month, imports queued or running at once, and the
 * size of one export. The store (shared/store/import-quota-store.ts) takes the slot and the month's
 * records in one transaction, so concurrent imports never pass either limit together.
 */
export interface ImportLimits {
  plan: string;
  /** Records per UTC month; undefined = unlimited. */
  recordsPerMonth: number | undefined;
  maxRunning: number;
  maxBytes: number;
}

/** A plan that leaves the running-import cap out allows one import at a time. */
export const DEFAULT_MAX_IMPORTS_RUNNING = 1;
/** A plan that leaves the export size out allows 1 GiB. */
export const DEFAULT_MAX_IMPORT_BYTES = 1024 * 1024 * 1024;

/**
 * How long an import holds its slot when nothing renews it: each step renews it, so only an import
 * whose worker stopped for good (its step in the dead-letter queue) frees the slot this way.
 */
export const IMPORT_LEASE_SECONDS = 3600;

export function importLimitsOf(plan: Plan): ImportLimits {
  return {
    plan: plan.name,
    recordsPerMonth: plan.importRecordsPerMonth,
    maxRunning: plan.maxImportsRunning ?? DEFAULT_MAX_IMPORTS_RUNNING,
    maxBytes: plan.maxImportBytes ?? DEFAULT_MAX_IMPORT_BYTES,
  };
}

export const IMPORT_QUOTA_FAILED_CODE = "import-quota-429";
export const IMPORT_CAP_FAILED_CODE = "import-429";

/** The export is larger than the plan lets one import read (nothing is created). */
export function exportTooLarge(limits: ImportLimits, sizeBytes: number): ValidationError {
  return ValidationError.single(
    "export",
    `the uploaded export is ${sizeBytes} bytes; plan ${limits.plan} lets an import read at most ${limits.maxBytes} bytes`,
  );
}

/** POST /data-type/import whose records do not fit in what is left of the month's import quota. */
export class ImportQuotaExceededError extends TooManyRequestsError {
  constructor(limits: ImportLimits, usedRecords: number, records: number, now: Date) {
    super(
      `Monthly import quota reached: plan ${limits.plan} allows ${limits.recordsPerMonth} imported records per month, ` +
        `${usedRecords} are used in ${utcMonth(now)} and this export announces ${records}. ` +
        `The quota resets at ${runQuotaResetsAt(now).toISOString()}.`,
      IMPORT_QUOTA_FAILED_CODE,
    );
  }
}

/** POST /data-type/import while the organization already has its plan's imports queued or running. */
export class TooManyImportsError extends TooManyRequestsError {
  constructor(limits: ImportLimits) {
    super(
      `Your organization already has ${limits.maxRunning} imports queued or running (the most plan ${limits.plan} allows at once); try again when one has finished.`,
      IMPORT_CAP_FAILED_CODE,
    );
  }
}

/** The UTC day (`YYYY-MM-DD`) an import started, from its state's `startedTime` (`YYYY-MM-DD HH:mm:ss`): the day and month it is charged to. */
export const importChargeDay = (startedTime: string) => startedTime.slice(0, 10);
