import type { RoutingRunMessage } from "#shared/domain/runs/messages";

/**
 * The once-a-minute scheduler tick, over ports (no AWS here). For every shard of the due index it
 * reads the schedules whose next run is at or before `now` (so minutes missed while the tick did
 * not run are caught up), and for each one:
 *
 * 1. claims the run slot with a conditional put (status ENQUEUED) — a duplicate tick, or two tick
 *    processes, can never both enqueue the same slot;
 * 2. enqueues one run message (sent in batches of 10) and marks the claim SENT;
 * 3. advances the schedule's next run with a conditional update (only if it still points at the
 *    slot just handled, so a concurrent edit by a user wins).
 *
 * Crash safety: a message SQS rejects has its claim released (deleted only while still un-sent) so
 * the next tick tries again; when SendMessageBatch itself throws, the claims of every message not
 * sent yet are released and the error is rethrown (EventBridge and the next tick retry). A tick that
 * finds a slot claimed already looks at the claim (one read, due schedules only): sent (SENT or any
 * later worker status) but the schedule still points at the slot → the earlier tick died before
 * advancing, so it advances; still un-sent and older than `resendAfterMs` → the earlier tick died
 * between claiming and sending (or before marking it sent), so it sends the message again (the worker
 * is idempotent per slot); un-sent and younger → another tick is at work on it, left alone.
 *
 * A slot later than `maxLatenessMs` is not run any more: the schedule is advanced and the miss
 * recorded (unless the slot's message had been sent — then it ran, or will, and only the advance was
 * lost). Cost: one bounded query per shard plus work per due schedule.
 */
export interface DueEntry {
  organizationId: string;
  scheduleId: string;
  nextRunAt: string;
}

export interface SlotClaimView {
  /** ENQUEUED = claimed, message not known to be sent; SENT or a worker status = sent. */
  status: string;
  claimedAt: string;
}

export interface SchedulerTickPorts {
  shardCount: number;
  listDue(shard: number, notAfter: Date, limit: number, cursor?: string): Promise<{ items: DueEntry[]; nextCursor: string | null }>;
  /** Reads what a claim needs; undefined when the schedule is gone. */
  readSchedule(organizationId: string, scheduleId: string): Promise<{ updatedTime: string; nextRunAt: string | null } | undefined>;
  /** Conditional put of the slot's claim item; false when it was claimed already. */
  claimSlot(message: RoutingRunMessage): Promise<boolean>;
  /** The slot's claim item, if any. */
  readClaim(organizationId: string, scheduleId: string, slot: string): Promise<SlotClaimView | undefined>;
  /** ENQUEUED → SENT (no change when a worker moved it on already). */
  markSent(message: RoutingRunMessage): Promise<void>;
  /** Deletes the claim, only while it still is ENQUEUED (un-sent). */
  releaseSlot(message: RoutingRunMessage): Promise<void>;
  /** Sends the messages; answers the ones that failed. Throws when the call itself failed. */
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
  /** An un-sent claim older than this was left by a tick that died; its message is sent again. */
  resendAfterMs: number;
}

export interface TickOutcome {
  enqueued: RoutingRunMessage[];
  alreadyClaimed: number;
  /** Of `enqueued`: un-sent claims left by a dead tick, sent again. */
  resent: number;
  /** Claimed slots whose message had been sent but whose schedule was not advanced; advanced now. */
  advancedLate: number;
  missed: number;
  failed: number;
}

export const defaultTickOptions: TickOptions = { maxPerShard: 500, maxLatenessMs: 60 * 60_000, resendAfterMs: 2 * 60_000 };

function minuteOf(instantIso: string): string {
  return `${new Date(instantIso).toISOString().slice(0, 16)}Z`;
}

const isSent = (claim: SlotClaimView) => claim.status !== "ENQUEUED";

export async function runSchedulerTick(ports: SchedulerTickPorts, now: Date, tickOptions: Partial<TickOptions> = {}): Promise<TickOutcome> {
  const options: TickOptions = { ...defaultTickOptions, ...tickOptions };
  const outcome: TickOutcome = { enqueued: [], alreadyClaimed: 0, resent: 0, advancedLate: 0, missed: 0, failed: 0 };
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

  const toSend: RoutingRunMessage[] = [];
  const resending = new Set<RoutingRunMessage>();
  for (const entry of due) {
    const slot = minuteOf(entry.nextRunAt);
    if (now.getTime() - new Date(entry.nextRunAt).getTime() > options.maxLatenessMs) {
      const claim = await ports.readClaim(entry.organizationId, entry.scheduleId, slot);
      // A sent slot ran (or will): only its advance was lost; never overwrite its logExecuted with a miss.
      if (!claim || !isSent(claim)) {
        await ports.recordMissed(entry.organizationId, entry.scheduleId, entry.nextRunAt);
        outcome.missed++;
      } else outcome.advancedLate++;
      await ports.advance(entry.organizationId, entry.scheduleId, entry.nextRunAt);
      continue;
    }
    const schedule = await ports.readSchedule(entry.organizationId, entry.scheduleId);
    if (!schedule || schedule.nextRunAt !== entry.nextRunAt) continue; // deleted or changed since the index was read
    const message: RoutingRunMessage = {
      kind: "schedule",
      organizationId: entry.organizationId,
      scheduleId: entry.scheduleId,
      slot,
      scheduledFor: entry.nextRunAt,
      scheduleUpdatedTime: schedule.updatedTime,
    };
    if (await ports.claimSlot(message)) {
      toSend.push(message);
      continue;
    }
    const claim = await ports.readClaim(entry.organizationId, entry.scheduleId, slot);
    if (claim && isSent(claim)) {
      // The tick that sent it died before advancing the schedule (the schedule still points at this slot).
      await ports.advance(entry.organizationId, entry.scheduleId, entry.nextRunAt);
      outcome.advancedLate++;
    } else if (claim && now.getTime() - Date.parse(claim.claimedAt) > options.resendAfterMs) {
      // Claimed but never (known to be) sent by a tick that died: send it again; the worker is idempotent per slot.
      toSend.push(message);
      resending.add(message);
    } else {
      outcome.alreadyClaimed++; // another tick is handling it right now
    }
  }

  for (let i = 0; i < toSend.length; i += 10) {
    const batch = toSend.slice(i, i + 10);
    let failed: Set<RoutingRunMessage>;
    try {
      failed = new Set(await ports.enqueue(batch));
    } catch (error) {
      // Nothing of this batch (or of the later ones) is known to be sent: release those claims so
      // the next tick claims and sends them again, and let the invocation fail.
      for (const message of toSend.slice(i)) await ports.releaseSlot(message);
      throw error;
    }
    for (const message of batch) {
      if (failed.has(message)) {
        await ports.releaseSlot(message);
        outcome.failed++;
      } else {
        await ports.markSent(message);
        await ports.advance(message.organizationId, message.scheduleId, message.scheduledFor);
        outcome.enqueued.push(message);
        if (resending.has(message)) outcome.resent++;
      }
    }
  }
  return outcome;
}
