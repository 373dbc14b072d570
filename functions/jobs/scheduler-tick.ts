import type { ScheduledEvent } from "aws-lambda";
import { logger } from "#shared/observability/logger";

/**
 * Invoked every minute by the EventBridge rule (and at each minute boundary by `npm start`).
 * Routing runs (a later issue) will read the due index here and fan due schedules out to SQS;
 * until then the tick only records that it ran.
 */
export const handler = async (event: ScheduledEvent): Promise<{ enqueued: number }> => {
  logger.setContext({ job: "scheduler-tick", tickTime: event.time });
  logger.debug("scheduler tick");
  return { enqueued: 0 };
};
