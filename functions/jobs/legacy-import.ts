import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { legacyImportService } from "#shared/app/legacy-import";
import { s3Client } from "#shared/blob/s3";
import type { LegacyImportService } from "#shared/domain/data-types/import-service";
import { importStepMessageSchema } from "#shared/domain/data-types/legacy-import";
import { jobHandler, traceClients } from "#shared/observability/job-handler";
import { logger, metrics, MetricUnit } from "#shared/observability/powertools";
import { importQueueDefinition } from "#shared/queue/definitions";
import { sqsClient } from "#shared/queue/sqs";
import { parseMessageBody, processSqsBatch, RedeliverMessage } from "#shared/queue/sqs-batch";
import { documentClient } from "#shared/store/dynamo";

traceClients(documentClient, s3Client, sqsClient);

/**
 * SQS worker of the legacy-import queue: each message is one step of one import (a page of
 * records, the finish, or a rollback page; shared/domain/data-types/import-service.ts). Reports
 * partial batch failures: a step that threw (or arrived before its predecessor committed) is
 * redelivered; a message that is not an import step is logged and acknowledged.
 *
 * Metrics (dimension job=legacy-import): `ImportStepFinished` and `ImportStepFailed` (an import
 * ended), `ImportStepError` (a step threw; retried); other outcomes are only logged.
 */
export function createLegacyImportHandler(
  service: () => LegacyImportService,
  maxReceiveCount: number = importQueueDefinition.maxReceiveCount,
) {
  return jobHandler("legacy-import", async (event: SQSEvent): Promise<SQSBatchResponse> => {
    return processSqsBatch(event, async (record) => {
      if (!(await handleRecord(record))) throw new RedeliverMessage("import step to retry");
    });

    /** True when the message is done with (acknowledged). */
    async function handleRecord(record: SQSRecord): Promise<boolean> {
      const step = parseMessageBody(record, importStepMessageSchema);
      if (!step) {
        logger.error("legacy import message is not an import step; acknowledged", { body: record.body });
        return true;
      }
      const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? 1);
      try {
        const outcome = await service().runStep(step, { receiveCount, maxReceiveCount });
        logger.info("legacy import step", { step, outcome });
        if (outcome === "finished" || outcome === "failed")
          metrics.addMetric(`ImportStep${outcome[0]?.toUpperCase()}${outcome.slice(1)}`, MetricUnit.Count, 1);
        return outcome !== "early";
      } catch (error) {
        logger.error("legacy import step failed; retried", { step, receiveCount, error });
        metrics.addMetric("ImportStepError", MetricUnit.Count, 1);
        return false;
      }
    }
  });
}

export const handler = createLegacyImportHandler(() => legacyImportService);
