import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { logger } from "#shared/observability/logger";

/**
 * SQS worker of the routing-run queue. Reports partial batch failures so one bad message does not
 * redeliver its batch-mates. The run itself arrives with the routing-runs issue; until then every
 * message is acknowledged and logged.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  for (const record of event.Records) {
    logger.setContext({ job: "routing-run", messageId: record.messageId });
    logger.warn("routing run received before runs are implemented; acknowledged", { body: record.body });
  }
  return { batchItemFailures: [] };
};
