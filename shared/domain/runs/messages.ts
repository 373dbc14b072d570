import * as z from "zod/mini";

/** The body of one SQS message of the routing-run queue: one schedule, one run slot. */
export const routingRunMessageSchema = z.object({
  kind: z.literal("schedule"),
  organizationId: z.string().check(z.minLength(1)),
  scheduleId: z.string().check(z.minLength(1)),
  /** The claimed slot: the run minute, ISO UTC (`2026-12-01T07:00Z`); with scheduleId it is the idempotency key. */
  slot: z.string().check(z.minLength(1)),
  /** The exact run instant the timetable produced (ISO 8601 UTC). */
  scheduledFor: z.string().check(z.minLength(1)),
  /** The schedule's `updatedTime` when the slot was claimed: a schedule changed since then is skipped. */
  scheduleUpdatedTime: z.string().check(z.minLength(1)),
  /** Times a worker sent the run back because its organization held its share of the workers (shared/queue/fair-worker.ts). */
  deferrals: z.optional(z.number()),
});

export type RoutingRunMessage = z.infer<typeof routingRunMessageSchema>;

/** An on-demand run (POST /routing/result): the result exists already (status ongoing); the worker fills it. */
export const onDemandRunMessageSchema = z.object({
  kind: z.literal("onDemand"),
  organizationId: z.string().check(z.minLength(1)),
  resultId: z.string().check(z.minLength(1)),
  deferrals: z.optional(z.number()),
});

export type OnDemandRunMessage = z.infer<typeof onDemandRunMessageSchema>;

/**
 * A page of due schedules the tick fanned out (more were due than one tick handles): a worker claims,
 * sends and advances them like the tick would. `tickTime` is the tick's minute (for the logs).
 */
export const duePageMessageSchema = z.object({
  kind: z.literal("duePage"),
  tickTime: z.string().check(z.minLength(1)),
  entries: z
    .array(
      z.object({
        organizationId: z.string().check(z.minLength(1)),
        scheduleId: z.string().check(z.minLength(1)),
        nextRunAt: z.string().check(z.minLength(1)),
      }),
    )
    .check(z.minLength(1)),
});

export type DuePageMessage = z.infer<typeof duePageMessageSchema>;

/** A run: what the run worker plans. */
export type RunQueueMessage = RoutingRunMessage | OnDemandRunMessage;

/** Everything the run queue carries: runs, and the tick's fan-out pages. */
export const runQueueMessageSchema = z.discriminatedUnion("kind", [
  routingRunMessageSchema,
  onDemandRunMessageSchema,
  duePageMessageSchema,
]);
