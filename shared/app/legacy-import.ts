import { configuredPlans } from "#shared/config/tenant-plans";
import { s3ImportSource } from "#shared/blob/import-source";
import { recordService } from "#shared/app/records";
import { createLegacyImportService, type ImportQuota, type LegacyImportDependencies } from "#shared/domain/data-types/import-service";
import { importChargeDay, importLimitsOf, ImportQuotaExceededError, TooManyImportsError } from "#shared/domain/usage/import-quota";
import { planOf } from "#shared/domain/usage/run-quota";
import { utcDay, utcMonth } from "#shared/domain/usage/schema";
import { sqsImportQueue } from "#shared/queue/import-queue";
import { dynamoDataTypeStore } from "#shared/store/data-type-store";
import { endImport, renewImport, takeImport } from "#shared/store/import-quota-store";
import { dynamoImportStateStore } from "#shared/store/import-state-store";
import { tenantPlanName } from "#shared/store/usage-store";

/** The organization's plan (tenant record, else the default plan) limits its imports. */
export const importQuota: ImportQuota = {
  limits: async (organizationId) => importLimitsOf(planOf(await tenantPlanName(organizationId), configuredPlans())),
  async take(organizationId, dataTypeId, records, limits, now) {
    const outcome = await takeImport(organizationId, dataTypeId, records, limits, now, utcDay(now), utcMonth(now));
    if (outcome.taken) return;
    throw outcome.reason === "cap"
      ? new TooManyImportsError(limits)
      : new ImportQuotaExceededError(limits, outcome.usedRecords, records, now);
  },
  renew: renewImport,
  end(organizationId, dataTypeId, startedTime, written, outcome) {
    const day = importChargeDay(startedTime);
    return endImport(organizationId, dataTypeId, day, day.slice(0, 7), written, outcome);
  },
};

/** What the legacy import runs over: S3 (the export), SQS (steps), DynamoDB (type, state, records, plan limits). */
export const legacyImportDependencies: LegacyImportDependencies = {
  dataTypes: dynamoDataTypeStore,
  imports: dynamoImportStateStore,
  source: s3ImportSource,
  queue: sqsImportQueue,
  records: recordService,
  quota: importQuota,
};

/** Composition root of the legacy import. */
export const legacyImportService = createLegacyImportService(legacyImportDependencies);
