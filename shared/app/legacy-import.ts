import { s3ImportSource } from "#shared/blob/import-source";
import { recordService } from "#shared/app/records";
import { createLegacyImportService } from "#shared/domain/data-types/import-service";
import { sqsImportQueue } from "#shared/queue/import-queue";
import { dynamoDataTypeStore } from "#shared/store/data-type-store";
import { dynamoImportStateStore } from "#shared/store/import-state-store";

/** Composition root of the legacy import: the domain service over S3 (the export), SQS (steps), DynamoDB (type, state, records). */
export const legacyImportService = createLegacyImportService({
  dataTypes: dynamoDataTypeStore,
  imports: dynamoImportStateStore,
  source: s3ImportSource,
  queue: sqsImportQueue,
  records: recordService,
});
