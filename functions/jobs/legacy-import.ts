import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { legacyImportService } from "#shared/app/legacy-import";
import { s3Client } from "#shared/blob/s3";
import type { LegacyImportService } from "#shared/domain/data-types/import-service";
import { importStepMessageSchema } from "#shared/domain/data-types/legacy-import";
import { jobHandler, traceClients } from "#shared/observability/job-handler";
import { logger, metrics, MetricUnit } from "#shared/observability/powertools";
import { importQueueDefinition } from "#shared/queue/definitions";
import { sqsClient } from "#shared/queue/sqs";
import { documentClient } from "#shared/store/dynamo";

traceClients(documentClient, s3Client, sqsClient);

/**
 * SQS worker of the legacy-import queue: each message is one step of one import (a page of
 * records, the finish, or a rollback page; shared/domain/data-types/import-service.ts). Reports
 * partial batch failures: a step that threw (or arrived before its predecessor committed) is
 * redelivered; a message that is not an import step is logged and acknowledged.
 *
 * Metrics (dimension job=legacy-import): `ImportStep<Outcome>` per message.
 */
export function createLegacyImportHandler(service: () => LegacyImportService, maxReceiveCount: number = importQueueDefinition.maxReceiveCount) {
  return jobHandler("legacy-import", async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failures: SQSBatchResponse["batchItemFailures"] = [];
    for (const record of event.Records) {
      logger.appendKeys({ messageId: record.messageId });
      if (!(await handleRecord(record))) failures.push({ itemIdentifier: record.messageId });
    }
    return { batchItemFailures: failures };

    /** True when the message is done with (acknowledged). */
    async function handleRecord(record: SQSRecord): Promise<boolean> {
      let body: unknown;
      try {
        body = JSON.parse(record.body);
      } catch {
        body = undefined;
      }
      const parsed = importStepMessageSchema.safeParse(body);
      if (!parsed.success) {
        logger.error("legacy import message is not an import step; acknowledged", { body: record.body });
        metrics.addMetric("ImportInvalidMessage", MetricUnit.Count, 1);
        return true;
      }
      const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? 1);
      try {
        const outcome = await service().runStep(parsed.data, { receiveCount, maxReceiveCount });
        logger.info("legacy import step", { step: parsed.data, outcome });
        metrics.addMetric(`ImportStep${outcome[0]?.toUpperCase()}${outcome.slice(1)}`, MetricUnit.Count, 1);
        return outcome !== "early";
      } catch (error) {
        logger.error("legacy import step failed; retried", { step: parsed.data, receiveCount, error });
        metrics.addMetric("ImportStepError", MetricUnit.Count, 1);
        return false;
      }
    }
  });
}

export const handler = createLegacyImportHandler(() => legacyImportService);
