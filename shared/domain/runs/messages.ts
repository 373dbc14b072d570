import { z } from "zod";

/** The body of one SQS message of the routing-run queue: one schedule, one run slot. */
export const routingRunMessageSchema = z.object({
  kind: z.literal("schedule"),
  organizationId: z.string().min(1),
  scheduleId: z.string().min(1),
  /** The claimed slot: the run minute, ISO UTC (`2026-12-01T07:00Z`); with scheduleId it is the idempotency key. */
  slot: z.string().min(1),
  /** The exact run instant the timetable produced (ISO 8601 UTC). */
  scheduledFor: z.string().min(1),
  /** The schedule's `updatedTime` when the slot was claimed: a schedule changed since then is skipped. */
  scheduleUpdatedTime: z.string().min(1),
});

export type RoutingRunMessage = z.infer<typeof routingRunMessageSchema>;

/** An on-demand run (POST /routing/result): the result exists already (status ongoing); the worker fills it. */
export const onDemandRunMessageSchema = z.object({
  kind: z.literal("onDemand"),
  organizationId: z.string().min(1),
  resultId: z.string().min(1),
});

export type OnDemandRunMessage = z.infer<typeof onDemandRunMessageSchema>;

export const runQueueMessageSchema = z.discriminatedUnion("kind", [routingRunMessageSchema, onDemandRunMessageSchema]);
export type RunQueueMessage = z.infer<typeof runQueueMessageSchema>;
