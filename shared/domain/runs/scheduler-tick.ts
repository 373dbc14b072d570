import type { DuePageMessage, RoutingRunMessage } from "#shared/domain/runs/messages";

/**
 * The once-a-minute scheduler tick, over ports (no AWS here). It reads the due index (every shard,
 * the schedules whose next run is at or before `now`, so minutes missed while the tick did not run
 * are caught up) and handles the due schedules in steps (`handleDueEntries`), each with at most
 * `concurrency` calls in flight:
 *
 * 1. reads the schedules, 100 per batch read (the advance reuses what it read: no second read);
 * 2. claims each run slot with a conditional put (status ENQUEUED) — a duplicate tick, or two tick
 *    processes, can never both enqueue the same slot;
 * 3. reads the caps of the claimed runs' organizations together, then takes each organization's cap
 *    slots for all its claimed runs with one call — runs over the cap are not sent: their claim and
 *    logExecuted say SKIPPED with the reason, and the schedule advances;
 * 4. sends the run messages in batches of 10;
 * 5. advances each sent schedule's next run with one conditional update (only if it still points at
 *    the slot just handled and is unchanged since step 1; else the store re-reads it, so a concurrent
 *    edit by a user wins).
 *
 * The advance is what says "sent": it only happens after SQS accepted the message, so a claim whose
 * schedule still points at its slot belongs to a tick that died between claiming and advancing.
 *
 * Fan-out: when more than `fanOutAbove` schedules are due, the tick does not handle them itself: it
 * sorts them by organization (so an organization's runs share a page and its cap is one write), cuts
 * them into pages of `pageSize` and sends one `duePage` job per page on the run queue; run
 * workers handle the pages in parallel with `handleDueEntries` (the same steps and the same crash
 * recovery). A page that is lost or fails for good changes nothing: its schedules stay due in the
 * index and the next tick takes them again.
 *
 * Crash safety: a message SQS rejects has its claim (deleted only while still ENQUEUED) and its cap slot
 * released so the next tick tries again; when a step throws (SendMessageBatch, a claim, a cap write), no
 * more calls start, what was sent is advanced, every claim not sent and its cap slot are released, and
 * the error is rethrown once the calls in flight have settled (EventBridge and the next tick retry). A tick that finds a slot claimed already while the
 * schedule still points at it looks at the claim (one read, due schedules only): moved on by a worker
 * (RUNNING or later) → the earlier tick died after sending but before advancing, so it advances;
 * still ENQUEUED and older than `resendAfterMs` → the earlier tick died somewhere between claiming and
 * advancing (it may or may not have sent), so it sends the message again — the worker is idempotent
 * per slot, so a duplicate costs one no-op delivery; ENQUEUED and younger → another tick is at work on
 * it, left alone.
 *
 * A slot later than `maxLatenessMs` is not run any more: the schedule is advanced and the miss
 * recorded (unless a worker had taken the slot's message — then it ran, or runs, and only the advance
 * was lost). Cost: the due-index queries plus, per due schedule, a hundredth of a batch read, one
 * claim, a tenth of a SendMessageBatch and one advance, and per organization and page one cap write
 * and a hundredth of a batch read of the plans.
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

/** What the tick needs of a schedule; the store's own record (`S`) is handed back to `advance` as read. */
export interface TickScheduleView {
  updatedTime: string;
  nextRunAt: string | null;
}

export interface SchedulerTickPorts<S extends TickScheduleView = TickScheduleView> {
  shardCount: number;
  listDue(shard: number, notAfter: Date, limit: number, cursor?: string): Promise<{ items: DueEntry[]; nextCursor: string | null }>;
  /** Reads the entries' schedules (at most 100, one batch read); answers them in the entries' order, undefined for a gone one. */
  readSchedules(entries: DueEntry[]): Promise<Array<S | undefined>>;
  /** Conditional put of the slot's claim item; false when it was claimed already. */
  claimSlot(message: RoutingRunMessage): Promise<boolean>;
  /** The slot's claim item, if any. */
  readClaim(organizationId: string, scheduleId: string, slot: string): Promise<SlotClaimView | undefined>;
  /** Deletes the claim, only while it still is ENQUEUED (un-sent). */
  releaseSlot(message: RoutingRunMessage): Promise<void>;
  /** Sends up to 10 run messages; answers the ones that failed. Throws when the call itself failed. */
  enqueue(messages: RoutingRunMessage[]): Promise<RoutingRunMessage[]>;
  /** Sends fan-out pages (up to 10 per call); throws when any was not accepted. */
  enqueuePages(pages: DuePageMessage[]): Promise<void>;
  /**
   * Moves the schedule's next run past `handledRunAt`, if it still is `handledRunAt`. `seen`: the
   * schedule as this tick read it (one conditional write when it is unchanged); without it the store reads it.
   */
  advance(organizationId: string, scheduleId: string, handledRunAt: string, seen?: S): Promise<void>;
  recordMissed(organizationId: string, scheduleId: string, missedRunAt: string): Promise<void>;
  /** The caps on active runs of these organizations (their plans' `maxRunsQueued`), read together. */
  capsOf(organizationIds: string[]): Promise<Map<string, number>>;
  /**
   * Takes (or keeps) slots of one organization's cap (`max`) for its runs (one write); answers the
   * runs that got one — the first that fit, in order; the others are over the cap.
   */
  takeActiveRuns(organizationId: string, messages: RoutingRunMessage[], max: number): Promise<RoutingRunMessage[]>;
  /** Frees the run's cap slot (its message was not sent); idempotent. */
  releaseActiveRun(message: RoutingRunMessage): Promise<void>;
  /** A run refused for the cap (`max`): its claim and the schedule's logExecuted become SKIPPED with the reason. */
  skipOverCap(message: RoutingRunMessage, max: number): Promise<void>;
}

export interface TickOptions {
  /** Due entries read per shard and tick (a safety bound); the rest waits for the next tick. */
  maxPerShard: number;
  /** More due schedules than this: fan out into `duePage` jobs instead of handling them in the tick. */
  fanOutAbove: number;
  /** Due entries per `duePage` job (a job message stays far below SQS's 256 KB). */
  pageSize: number;
  /** Calls in flight in each step of handling due entries (batch reads, claims, cap writes, SendMessageBatch calls, advances). */
  concurrency: number;
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
  /** Runs not sent because their organization was at its cap on active runs (recorded SKIPPED). */
  overCap: number;
  /** Due schedules handed to `duePage` jobs instead of being handled by this tick. */
  fannedOut: number;
  pages: number;
}

export const defaultTickOptions: TickOptions = {
  maxPerShard: 250_000,
  fanOutAbove: 2_000,
  pageSize: 500,
  concurrency: 32,
  maxLatenessMs: 60 * 60_000,
  resendAfterMs: 2 * 60_000,
};

/** SQS's SendMessageBatch limit. */
const SQS_BATCH = 10;
/** Schedules per batch read (BatchGetItem takes up to 100 keys). */
const READ_BATCH = 100;

function minuteOf(instantIso: string): string {
  return `${new Date(instantIso).toISOString().slice(0, 16)}Z`;
}

/** A worker took the slot's message (RUNNING or later; SENT is what claims of earlier versions said once sent). */
const isSent = (claim: SlotClaimView) => claim.status !== "ENQUEUED";

const emptyOutcome = (): TickOutcome => ({
  enqueued: [],
  alreadyClaimed: 0,
  resent: 0,
  advancedLate: 0,
  missed: 0,
  failed: 0,
  overCap: 0,
  fannedOut: 0,
  pages: 0,
});

export async function runSchedulerTick<S extends TickScheduleView>(
  ports: SchedulerTickPorts<S>,
  now: Date,
  tickOptions: Partial<TickOptions> = {},
): Promise<TickOutcome> {
  const options: TickOptions = { ...defaultTickOptions, ...tickOptions };
  const shards = await Promise.all(
    Array.from({ length: ports.shardCount }, (_, shard) => readShard(ports, shard, now, options.maxPerShard)),
  );
  const due = shards.flat();
  if (due.length <= options.fanOutAbove) return handleDueEntries(ports, due, now, options);

  const outcome = emptyOutcome();
  // An organization's due schedules are spread over the shards: grouped, they share a page, so its
  // cap is taken with one write per page (oldest first within the organization).
  due.sort((a, b) =>
    a.organizationId < b.organizationId ? -1 : a.organizationId > b.organizationId ? 1 : a.nextRunAt.localeCompare(b.nextRunAt),
  );
  const pages: DuePageMessage[] = [];
  for (let i = 0; i < due.length; i += options.pageSize) {
    pages.push({ kind: "duePage", tickTime: now.toISOString(), entries: due.slice(i, i + options.pageSize) });
  }
  // Nothing is claimed yet: a page SQS does not take is simply handled by the next tick.
  for (let i = 0; i < pages.length; i += SQS_BATCH) await ports.enqueuePages(pages.slice(i, i + SQS_BATCH));
  outcome.fannedOut = due.length;
  outcome.pages = pages.length;
  return outcome;
}

async function readShard(ports: SchedulerTickPorts<TickScheduleView>, shard: number, now: Date, maxPerShard: number): Promise<DueEntry[]> {
  const entries: DueEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await ports.listDue(shard, now, Math.min(1000, maxPerShard - entries.length), cursor);
    entries.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && entries.length < maxPerShard);
  return entries;
}

type Prepared<S> = { send: RoutingRunMessage; resend: boolean; seen: S } | undefined;

/** Steps before sending, for one due entry and its schedule as read: answers the message to send, if any. */
async function prepareEntry<S extends TickScheduleView>(
  ports: SchedulerTickPorts<S>,
  entry: DueEntry,
  schedule: S | undefined,
  now: Date,
  options: TickOptions,
  outcome: TickOutcome,
): Promise<Prepared<S>> {
  const slot = minuteOf(entry.nextRunAt);
  if (now.getTime() - new Date(entry.nextRunAt).getTime() > options.maxLatenessMs) {
    const claim = await ports.readClaim(entry.organizationId, entry.scheduleId, slot);
    // A slot a worker took ran (or runs): only its advance was lost; never overwrite its logExecuted with a miss.
    if (!claim || !isSent(claim)) {
      await ports.recordMissed(entry.organizationId, entry.scheduleId, entry.nextRunAt);
      outcome.missed++;
    } else outcome.advancedLate++;
    await ports.advance(entry.organizationId, entry.scheduleId, entry.nextRunAt, schedule);
    return undefined;
  }
  if (!schedule || schedule.nextRunAt !== entry.nextRunAt) return undefined; // deleted or changed since the index was read
  const message: RoutingRunMessage = {
    kind: "schedule",
    organizationId: entry.organizationId,
    scheduleId: entry.scheduleId,
    slot,
    scheduledFor: entry.nextRunAt,
    scheduleUpdatedTime: schedule.updatedTime,
  };
  if (await ports.claimSlot(message)) return { send: message, resend: false, seen: schedule };
  const claim = await ports.readClaim(entry.organizationId, entry.scheduleId, slot);
  if (claim && isSent(claim)) {
    // A worker took the message, but the tick that sent it died before advancing the schedule (it still points at this slot).
    await ports.advance(entry.organizationId, entry.scheduleId, entry.nextRunAt, schedule);
    outcome.advancedLate++;
  } else if (claim && now.getTime() - Date.parse(claim.claimedAt) > options.resendAfterMs) {
    // Claimed by a tick that died before advancing (sent or not): send it again; the worker is idempotent per slot.
    return { send: message, resend: true, seen: schedule };
  } else {
    outcome.alreadyClaimed++; // another tick is handling it right now
  }
  return undefined;
}

/** Frees what an un-sent message held: its claim (only while un-sent) and its cap slot. */
async function releaseUnsent(ports: SchedulerTickPorts<TickScheduleView>, message: RoutingRunMessage): Promise<void> {
  await ports.releaseSlot(message);
  await ports.releaseActiveRun(message);
}

/**
 * Runs `work` over `items`, at most `limit` at a time, in order. After the first failure no item
 * starts any more; once the started ones have settled, answers their results (undefined where not
 * run or failed) and that first error.
 */
async function bounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<{ results: Array<R | undefined>; error: unknown }> {
  const results: Array<R | undefined> = new Array(items.length);
  let next = 0;
  let failed = false;
  let error: unknown;
  const lane = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index] as T, index);
      } catch (thrown) {
        if (!failed) error = thrown;
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, lane));
  return { results, error: failed ? (error ?? new Error("a step of the tick failed")) : undefined };
}

function chunked<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * Handles due entries (the tick's own, or one `duePage` job's) in steps, each with at most
 * `concurrency` calls in flight:
 *
 * 1. reads the schedules, 100 per batch read;
 * 2. claims each slot (one conditional put per schedule);
 * 3. takes the cap slots of each organization's claimed runs with one conditional write (the plan's
 *    cap read once per organization by the ports); runs over the cap are recorded SKIPPED and advanced;
 * 4. sends the runs in batches of 10 (SendMessageBatch);
 * 5. advances each sent schedule (one conditional update).
 *
 * A step that throws stops the others from starting more work: what was sent is still advanced,
 * every claim not sent (and its cap slot) is released, so the next tick takes it again, and the
 * error is rethrown. A message SQS rejects in a batch answer is released the same way.
 */
export async function handleDueEntries<S extends TickScheduleView>(
  ports: SchedulerTickPorts<S>,
  due: DueEntry[],
  now: Date,
  tickOptions: Partial<TickOptions> = {},
): Promise<TickOutcome> {
  const options: TickOptions = { ...defaultTickOptions, ...tickOptions };
  const outcome = emptyOutcome();
  const read = await bounded(chunked(due, READ_BATCH), options.concurrency, (entries) => ports.readSchedules(entries));
  if (read.error) throw read.error; // nothing claimed yet
  const schedules = read.results.flatMap((chunk) => chunk ?? []);

  const prepared = await bounded(due, options.concurrency, (entry, index) =>
    prepareEntry(ports, entry, schedules[index], now, options, outcome),
  );
  const claimed = prepared.results.filter((p): p is NonNullable<Prepared<S>> => p !== undefined);
  /** Claimed and not (yet) sent nor skipped: released at the end, whatever happened. */
  const unsent = new Set(claimed.map((p) => p.send));
  let failure = prepared.error;

  const sendable: Array<NonNullable<Prepared<S>>> = [];
  if (failure === undefined) {
    const byOrganization = new Map<string, Array<NonNullable<Prepared<S>>>>();
    for (const p of claimed) byOrganization.set(p.send.organizationId, [...(byOrganization.get(p.send.organizationId) ?? []), p]);
    const overCap: Array<NonNullable<Prepared<S>>> = [];
    let caps = new Map<string, number>();
    try {
      if (byOrganization.size > 0) caps = await ports.capsOf([...byOrganization.keys()]);
    } catch (error) {
      failure = error;
    }
    const capOf = (organizationId: string) => {
      const cap = caps.get(organizationId);
      if (cap === undefined) throw new Error(`no cap on active runs for organization ${organizationId}`);
      return cap;
    };
    const capped = await bounded(failure === undefined ? [...byOrganization] : [], options.concurrency, async ([organizationId, runs]) => {
      const taken = new Set(
        await ports.takeActiveRuns(
          organizationId,
          runs.map((p) => p.send),
          capOf(organizationId),
        ),
      );
      for (const p of runs) (taken.has(p.send) ? sendable : overCap).push(p);
    });
    failure ??= capped.error;
    const skipped = await bounded(failure === undefined ? overCap : [], options.concurrency, async ({ send, seen }) => {
      await ports.skipOverCap(send, capOf(send.organizationId));
      unsent.delete(send);
      await ports.advance(send.organizationId, send.scheduleId, send.scheduledFor, seen);
      outcome.overCap++;
    });
    failure ??= skipped.error;
  }
  // Page order: a page cut short by a failure has sent its oldest slots first.
  const order = new Map(claimed.map((p, index) => [p, index]));
  sendable.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));

  const sent: Array<NonNullable<Prepared<S>>> = [];
  const sending = await bounded(failure === undefined ? chunked(sendable, SQS_BATCH) : [], options.concurrency, async (batch) => {
    const rejected = new Set(await ports.enqueue(batch.map((p) => p.send)));
    for (const p of batch) {
      if (rejected.has(p.send)) {
        outcome.failed++;
        continue;
      }
      unsent.delete(p.send);
      sent.push(p);
      outcome.enqueued.push(p.send);
      if (p.resend) outcome.resent++;
    }
  });
  failure ??= sending.error;
  // What SQS took is advanced even when another step failed: otherwise it would be sent again after the grace period.
  const advancing = await bounded(sent, options.concurrency, ({ send, seen }) =>
    ports.advance(send.organizationId, send.scheduleId, send.scheduledFor, seen),
  );
  failure ??= advancing.error;
  const released = await bounded([...unsent], options.concurrency, (message) => releaseUnsent(ports, message));
  failure ??= released.error;
  if (failure !== undefined) throw failure;
  return outcome;
}
