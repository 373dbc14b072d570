import type { RoutingRunMessage } from "#shared/domain/runs/messages";

/**
 * The once-a-minute scheduler tick, over ports (no AWS here). For every shard of the due index it
 * reads the schedules whose next run is at or before `now` (so minutes missed while the tick did
 * not run are caught up), and for each one:
 *
 * 1. claims the run slot with a conditional put — a duplicate tick, or two tick processes, can
 *    never both enqueue the same slot;
 * 2. enqueues one run message (sent in batches of 10);
 * 3. advances the schedule's next run with a conditional update (only if it still points at the
 *    slot just handled, so a concurrent edit by a user wins).
 *
 * A slot whose message could not be sent is released (claim deleted, schedule not advanced) so the
 * next tick tries again. A slot later than `maxLatenessMs` is not run any more: the schedule is
 * advanced and the miss recorded. Cost: one bounded query per shard plus work per due schedule.
 */
export interface DueEntry {
  organizationId: string;
  scheduleId: string;
  nextRunAt: string;
}

export interface SchedulerTickPorts {
  shardCount: number;
  listDue(shard: number, notAfter: Date, limit: number, cursor?: string): Promise<{ items: DueEntry[]; nextCursor: string | null }>;
  /** Reads what a claim needs; undefined when the schedule is gone. */
  readSchedule(organizationId: string, scheduleId: string): Promise<{ updatedTime: string; nextRunAt: string | null } | undefined>;
  /** Conditional put of the slot's claim item; false when it was claimed already. */
  claimSlot(message: RoutingRunMessage): Promise<boolean>;
  releaseSlot(message: RoutingRunMessage): Promise<void>;
  /** Sends the messages; answers the ones that failed. */
  enqueue(messages: RoutingRunMessage[]): Promise<RoutingRunMessage[]>;
  /** Moves the schedule's next run past `handledRunAt`, if it still is `handledRunAt`. */
  advance(organizationId: string, scheduleId: string, handledRunAt: string): Promise<void>;
  recordMissed(organizationId: string, scheduleId: string, missedRunAt: string): Promise<void>;
}

export interface TickOptions {
  /** Due entries read per shard and tick; the rest waits for the next tick. */
  maxPerShard: number;
  /** Slots later than this are skipped instead of run. */
  maxLatenessMs: number;
}

export interface TickOutcome {
  enqueued: RoutingRunMessage[];
  alreadyClaimed: number;
  missed: number;
  failed: number;
}

export const defaultTickOptions: TickOptions = { maxPerShard: 500, maxLatenessMs: 60 * 60_000 };

function minuteOf(instantIso: string): string {
  return `${new Date(instantIso).toISOString().slice(0, 16)}Z`;
}

export async function runSchedulerTick(ports: SchedulerTickPorts, now: Date, options: TickOptions = defaultTickOptions): Promise<TickOutcome> {
  const outcome: TickOutcome = { enqueued: [], alreadyClaimed: 0, missed: 0, failed: 0 };
  const due: DueEntry[] = [];
  for (let shard = 0; shard < ports.shardCount; shard++) {
    let cursor: string | undefined;
    let read = 0;
    do {
      const page = await ports.listDue(shard, now, Math.min(100, options.maxPerShard - read), cursor);
      due.push(...page.items);
      read += page.items.length;
      cursor = page.nextCursor ?? undefined;
    } while (cursor && read < options.maxPerShard);
  }

  const claimed: RoutingRunMessage[] = [];
  for (const entry of due) {
    if (now.getTime() - new Date(entry.nextRunAt).getTime() > options.maxLatenessMs) {
      await ports.recordMissed(entry.organizationId, entry.scheduleId, entry.nextRunAt);
      await ports.advance(entry.organizationId, entry.scheduleId, entry.nextRunAt);
      outcome.missed++;
      continue;
    }
    const schedule = await ports.readSchedule(entry.organizationId, entry.scheduleId);
    if (!schedule || schedule.nextRunAt !== entry.nextRunAt) continue; // deleted or changed since the index was read
    const message: RoutingRunMessage = {
      kind: "schedule",
      organizationId: entry.organizationId,
      scheduleId: entry.scheduleId,
      slot: minuteOf(entry.nextRunAt),
      scheduledFor: entry.nextRunAt,
      scheduleUpdatedTime: schedule.updatedTime,
    };
    if (await ports.claimSlot(message)) claimed.push(message);
    else outcome.alreadyClaimed++;
  }

  for (let i = 0; i < claimed.length; i += 10) {
    const batch = claimed.slice(i, i + 10);
    const failed = new Set(await ports.enqueue(batch));
    for (const message of batch) {
      if (failed.has(message)) {
        await ports.releaseSlot(message);
        outcome.failed++;
      } else {
        await ports.advance(message.organizationId, message.scheduleId, message.scheduledFor);
        outcome.enqueued.push(message);
      }
    }
  }
  return outcome;
}
