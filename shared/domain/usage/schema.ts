import * as z from "zod/mini";
import { component, clientText } from "#shared/domain/schemas";

/**
 * Metering: what a tenant used, per UTC day. API calls are counted by the gateway (the local
 * gateway's call counters; on AWS the usage plan), routing runs by the run worker (one usage item
 * per run, shared/domain/runs/run-worker.ts), webhook delivery attempts by the delivery worker (one
 * counter per day, shared/app/webhook-events.ts).
 */

/** Longest range GET /usage and `npm run usage` answer at once (a year, leap years included). */
export const MAX_USAGE_RANGE_DAYS = 366;

const dayPattern = /^\d{4}-\d{2}-\d{2}$/;

/** A UTC calendar day `YYYY-MM-DD` that exists (2026-02-30 does not). */
export const usageDaySchema = z.string().check(
  clientText,
  z.regex(dayPattern, "must be a date YYYY-MM-DD"),
  z.refine((day) => isCalendarDay(day), "must be a date that exists"),
);

/** `YYYY-MM-DD` naming a day that exists (the Date round trip rejects 2026-02-30). */
function isCalendarDay(day: string): boolean {
  if (!dayPattern.test(day)) return false;
  const parsed = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === day;
}

export const usageQuerySchema = z.strictObject({ from: usageDaySchema, to: usageDaySchema }).check(
  z.superRefine((query, context) => {
    if (!isCalendarDay(query.from) || !isCalendarDay(query.to)) return;
    const days = daysBetween(query.from, query.to);
    if (days < 1) context.addIssue({ code: "custom", path: ["to"], message: "must not be before from" });
    else if (days > MAX_USAGE_RANGE_DAYS)
      context.addIssue({ code: "custom", path: ["to"], message: `the range may span at most ${MAX_USAGE_RANGE_DAYS} days` });
  }),
);
export type UsageQuery = z.infer<typeof usageQuerySchema>;

/** Days from `from` to `to`, both included (0 or less when `to` is before `from`). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;
}

/** Every day of the range, in order. */
export function daysOf(from: string, to: string): string[] {
  const start = Date.parse(`${from}T00:00:00Z`);
  return Array.from({ length: Math.max(0, daysBetween(from, to)) }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
}

export const utcDay = (instant: Date) => instant.toISOString().slice(0, 10);
export const utcMonth = (instant: Date) => instant.toISOString().slice(0, 7);

/** Where the `calls` figures come from: the local gateway's counters, or the AWS usage plan (not readable by the API). */
export const callsSources = ["local-gateway", "usage-plan"] as const;
export type CallsSource = (typeof callsSources)[number];

const runFiguresSchema = z.object({
  count: z.number().check(z.int(), z.describe("Routing runs metered that day (each run once, by the UTC day it started).")),
  seconds: z.number().check(z.describe("Optimizer seconds those runs used.")),
  travelElements: z
    .number()
    .check(
      z.int(),
      z.describe(
        "Road-network matrix entries and route-geometry legs those runs asked of travel providers (capped by the plan's travelElementsPerMonth).",
      ),
    ),
});

export const usageDayFiguresSchema = z.object({
  day: z.string().check(clientText, z.describe("UTC day, YYYY-MM-DD.")),
  calls: z
    .nullable(z.number().check(z.int()))
    .check(z.describe("API calls that day; null when calls are counted by the AWS usage plan (callsSource usage-plan).")),
  runs: runFiguresSchema,
  webhookAttempts: z
    .number()
    .check(
      z.int(),
      z.describe(
        "Webhook delivery attempts made that day (each POST to a subscription's URL, retries included; POST /webhook/{id}/test too).",
      ),
    ),
});

export const usageReportSchema = z.object({
  organizationId: z.string().check(clientText),
  from: z.string().check(clientText),
  to: z.string().check(clientText),
  callsSource: z.enum(callsSources),
  days: z.array(usageDayFiguresSchema),
  totals: z.object({ calls: z.nullable(z.number().check(z.int())), runs: runFiguresSchema, webhookAttempts: z.number().check(z.int()) }),
});
export type UsageReport = z.infer<typeof usageReportSchema>;
export type UsageDay = z.infer<typeof usageDayFiguresSchema>;

/** One routing run's usage item (keys.runUsage), written once per run. */
export interface RunUsage {
  organizationId: string;
  /** The run's routing result id (stable across redeliveries of the run's message). */
  runId: string;
  kind: "scheduled" | "onDemand";
  scheduleId: string | null;
  hubId: string;
  configurationId: string;
  /** UTC day the run started (`YYYY-MM-DD`, from the run id's timestamp): the day it is billed on. */
  day: string;
  outcome: "done" | "failed";
  optimizerSeconds: number;
  memoryMb: number;
  visits: number;
  vehicles: number;
  /** Road-network matrix entries asked of the travel provider for this run (0: great circle, or all cached). */
  travelElements: number;
  /** When the usage was recorded (`YYYY-MM-DD HH:mm:ss` UTC). */
  time: string;
}

/** The day and seconds of a run usage item (what the report needs). */
export interface RunUsageFigures {
  day: string;
  optimizerSeconds: number;
  /** Absent on items metered before travel providers: 0. */
  travelElements?: number;
}

/** Sums per day and in total; `calls` undefined = counted elsewhere (the AWS usage plan); `webhookAttemptsPerDay`: days without attempts are absent. */
export function buildUsageReport(
  organizationId: string,
  query: UsageQuery,
  callsSource: CallsSource,
  callsPerDay: Map<string, number> | undefined,
  runs: RunUsageFigures[],
  webhookAttemptsPerDay: Map<string, number> = new Map(),
): UsageReport {
  const perDay = new Map<string, { count: number; seconds: number; travelElements: number }>();
  for (const run of runs) {
    const figures = perDay.get(run.day) ?? { count: 0, seconds: 0, travelElements: 0 };
    figures.count += 1;
    figures.seconds += run.optimizerSeconds;
    figures.travelElements += run.travelElements ?? 0;
    perDay.set(run.day, figures);
  }
  const days: UsageDay[] = daysOf(query.from, query.to).map((day) => {
    const figures = perDay.get(day) ?? { count: 0, seconds: 0, travelElements: 0 };
    return {
      day,
      calls: callsPerDay ? (callsPerDay.get(day) ?? 0) : null,
      runs: { count: figures.count, seconds: roundSeconds(figures.seconds), travelElements: figures.travelElements },
      webhookAttempts: webhookAttemptsPerDay.get(day) ?? 0,
    };
  });
  return {
    organizationId,
    from: query.from,
    to: query.to,
    callsSource,
    days,
    totals: {
      calls: callsPerDay ? days.reduce((sum, day) => sum + (day.calls ?? 0), 0) : null,
      runs: {
        count: days.reduce((sum, day) => sum + day.runs.count, 0),
        seconds: roundSeconds(days.reduce((sum, day) => sum + day.runs.seconds, 0)),
        travelElements: days.reduce((sum, day) => sum + day.runs.travelElements, 0),
      },
      webhookAttempts: days.reduce((sum, day) => sum + day.webhookAttempts, 0),
    },
  };
}

/** Seconds are metered to the millisecond. */
export function roundSeconds(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("Usage", usageReportSchema);
