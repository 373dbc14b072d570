import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type ActiveRunLeases, endedLeases, leaseEnd, mayTakeSlot, planSlotTake } from "#shared/domain/runs/active-runs";
import { conditionally, documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import { type ItemKey, keys } from "#shared/store/keys";

/**
 * The per-organization cap on active runs (shared/domain/runs/active-runs.ts): one item
 * `ORG#o` / `ACTIVERUNS` whose `runs` map holds a lease end (epoch ms) per queued or running run.
 */

/** DynamoDB rejects a path into a map that does not exist yet with a ValidationException. */
const isMissingPath = (error: unknown) =>
  error instanceof Error && error.name === "ValidationException" && /document path/i.test(error.message);

/**
 * Takes (or renews) the run's slot when the organization holds fewer than `max` live leases. One
 * conditional write decides, so concurrent takers never exceed the cap. When it is full, ended
 * leases (crashed workers' runs) are removed and the write is tried again.
 */
export async function takeActiveRunSlot(
  organizationId: string,
  runKey: string,
  max: number,
  now: Date,
  leaseSeconds: number,
): Promise<boolean> {
  return takeLeaseSlot(keys.activeRuns(organizationId), "activeRuns", runKey, max, now, leaseSeconds);
}

/**
 * The same for any item of leases (`runs` map) of one organization: the cap on active runs, and the
 * per-tenant worker slots of the SQS workers (shared/store/worker-slot-store.ts).
 */
export async function takeLeaseSlot(
  key: ItemKey,
  entity: string,
  runKey: string,
  max: number,
  now: Date,
  leaseSeconds: number,
): Promise<boolean> {
  // Each retry follows a change by another taker (map created, ended leases removed): a handful suffices.
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: "SET runs.#run = :until",
          ConditionExpression: "attribute_exists(runs) AND (attribute_exists(runs.#run) OR size(runs) < :max)",
          ExpressionAttributeNames: { "#run": runKey },
          ExpressionAttributeValues: { ":until": leaseEnd(now, leaseSeconds), ":max": max },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error) && !isMissingPath(error)) throw error;
    }
    const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
    const runs = output.Item?.runs as ActiveRunLeases | undefined;
    if (!runs) {
      // First run of the organization: create the empty map (if a concurrent taker has not), then take.
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: "SET runs = if_not_exists(runs, :empty), entity = :entity",
          ExpressionAttributeValues: { ":empty": {}, ":entity": entity },
        }),
      );
      continue;
    }
    // The write failed before another taker had created the map: there is room, try again.
    if (Object.keys(runs).length < max || runKey in runs) continue;
    const ended = endedLeases(runs, now);
    if (!mayTakeSlot(runs, runKey, max, now) || ended.length === 0) return false; // the cap is full of live runs
    // Each removal only if the lease is still the ended one (a renewal in between wins).
    const names = Object.fromEntries(ended.map((run, i) => [`#e${i}`, run]));
    const values = Object.fromEntries(ended.map((run, i) => [`:e${i}`, runs[run]]));
    await conditionally(
      documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: `REMOVE ${ended.map((_, i) => `runs.#e${i}`).join(", ")}`,
          ConditionExpression: ended.map((_, i) => `runs.#e${i} = :e${i}`).join(" AND "),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }
  return false;
}

/**
 * Takes (or renews) slots for several runs of one organization with one conditional write: the
 * runs that fit under `max`, in the order given; answers those (the runs that hold a slot already
 * among them). The scheduler tick's way, one write per organization and page instead of one per run.
 *
 * First, without reading: all of them when the map has room for all (`size(runs) <= max - n`; a
 * run holding a slot already makes this stricter than needed, never looser). Otherwise the map is
 * read (consistent) and `planSlotTake` decides; the write is conditional on the map being as read
 * (size, the ended leases it removes, the held runs present, the taken ones absent), and is tried
 * again on what a concurrent taker left. Throws when the map kept changing (the caller releases what
 * it claimed and is retried), rather than calling a run over the cap that was not.
 */
export async function takeActiveRunSlots(
  organizationId: string,
  runKeys: readonly string[],
  max: number,
  now: Date,
  leaseSeconds: number,
): Promise<string[]> {
  const unique = [...new Set(runKeys)];
  const taken: string[] = [];
  // Chunks keep each expression within DynamoDB's 4 KB; a later chunk still keeps its held runs when the cap is full.
  for (let i = 0; i < unique.length; i += SLOTS_PER_WRITE)
    taken.push(...(await takeChunk(organizationId, unique.slice(i, i + SLOTS_PER_WRITE), max, now, leaseSeconds)));
  return taken;
}

/** Runs taken, and ended leases removed, by one write (each adds ~60 bytes to its expressions). */
const SLOTS_PER_WRITE = 40;

/**
 * The `runs` map of an item a failed condition answered (`ReturnValuesOnConditionCheckFailure`: the
 * document client leaves it in DynamoDB's attribute-value form): lease ends are numbers.
 */
function runsOfFailedItem(error: unknown): ActiveRunLeases | undefined | "unknown" {
  const item = (error as { Item?: { runs?: { M?: Record<string, { N?: string }> } } }).Item;
  if (!item) return undefined; // no item: no map
  const map = item.runs?.M;
  if (!map || Object.values(map).some((until) => until.N === undefined)) return "unknown"; // not the expected form: read it
  return Object.fromEntries(Object.entries(map).map(([run, until]) => [run, Number(until.N)]));
}

/** One conditional write; on a failed condition, the map it found (undefined: no map yet). */
async function writeOrRead(
  input: ConstructorParameters<typeof UpdateCommand>[0],
): Promise<{ written: true } | { written: false; runs: ActiveRunLeases | undefined | "unknown" }> {
  try {
    await documentClient().send(new UpdateCommand({ ...input, ReturnValuesOnConditionCheckFailure: "ALL_OLD" }));
    return { written: true };
  } catch (error) {
    if (isMissingPath(error)) return { written: false, runs: undefined };
    if (!isConditionalCheckFailed(error)) throw error;
    return { written: false, runs: runsOfFailedItem(error) };
  }
}

async function takeChunk(organizationId: string, runKeys: string[], max: number, now: Date, leaseSeconds: number): Promise<string[]> {
  const key = keys.activeRuns(organizationId);
  const until = leaseEnd(now, leaseSeconds);
  const names = (prefix: string, runs: string[]) => Object.fromEntries(runs.map((run, i) => [`#${prefix}${i}`, run]));
  const sets = (prefix: string, runs: string[]) => runs.map((_, i) => `runs.#${prefix}${i} = :until`);
  /** The map as last seen: unknown until a read or a failed write showed it. */
  let runs: ActiveRunLeases | undefined | "unknown" = "unknown";
  if (runKeys.length <= max) {
    const outcome = await writeOrRead({
      TableName: tableName(),
      Key: key,
      UpdateExpression: `SET ${sets("t", runKeys).join(", ")}`,
      ConditionExpression: "attribute_exists(runs) AND size(runs) <= :limit",
      ExpressionAttributeNames: names("t", runKeys),
      ExpressionAttributeValues: { ":until": until, ":limit": max - runKeys.length },
    });
    if (outcome.written) return runKeys;
    runs = outcome.runs;
  }
  for (let attempt = 0; attempt < 8; attempt++) {
    if (runs === "unknown") {
      const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
      runs = output.Item?.runs as ActiveRunLeases | undefined;
    }
    if (!runs) {
      // The organization's first runs: create the map holding the first `max` of them, unless a concurrent taker created it.
      const first = runKeys.slice(0, max);
      const outcome = await writeOrRead({
        TableName: tableName(),
        Key: key,
        UpdateExpression: "SET runs = :runs, entity = :entity",
        ConditionExpression: "attribute_not_exists(runs)",
        ExpressionAttributeValues: { ":runs": Object.fromEntries(first.map((run) => [run, until])), ":entity": "activeRuns" },
      });
      if (outcome.written) return first;
      runs = outcome.runs ?? "unknown"; // a concurrent taker created it
      continue;
    }
    const seen: ActiveRunLeases = runs;
    const { held, taken, ended } = planSlotTake(seen, runKeys, max, now, SLOTS_PER_WRITE);
    const kept = new Set([...held, ...taken]);
    if (kept.size === 0 && ended.length === 0) return [];
    const conditions = [
      "size(runs) = :size",
      ...ended.map((_, i) => `runs.#e${i} = :e${i}`),
      ...held.map((_, i) => `attribute_exists(runs.#h${i})`),
      ...taken.map((_, i) => `attribute_not_exists(runs.#t${i})`),
    ];
    const set = [...sets("h", held), ...sets("t", taken)];
    const outcome = await writeOrRead({
      TableName: tableName(),
      Key: key,
      UpdateExpression: [
        set.length > 0 ? `SET ${set.join(", ")}` : "",
        ended.length > 0 ? `REMOVE ${ended.map((_, i) => `runs.#e${i}`).join(", ")}` : "",
      ]
        .join(" ")
        .trim(),
      ConditionExpression: conditions.join(" AND "),
      ExpressionAttributeNames: { ...names("e", ended), ...names("h", held), ...names("t", taken) },
      ExpressionAttributeValues: {
        ":size": Object.keys(seen).length,
        ...(set.length > 0 ? { ":until": until } : {}),
        ...Object.fromEntries(ended.map((run, i) => [`:e${i}`, seen[run]])),
      },
    });
    if (!outcome.written) {
      runs = outcome.runs ?? "unknown";
      continue;
    }
    // Only ended leases were removed (more than one write's worth): read again, there may be room now.
    if (kept.size === 0) {
      runs = "unknown";
      continue;
    }
    return runKeys.filter((run) => kept.has(run));
  }
  throw new Error(`the active runs of organization ${organizationId} kept changing; no slots taken`);
}

/** Frees the run's slot; releasing a slot that is not held (twice, or never taken) changes nothing. */
export async function releaseActiveRunSlot(organizationId: string, runKey: string): Promise<void> {
  await releaseLeaseSlot(keys.activeRuns(organizationId), runKey);
}

/** Frees one lease of an item of leases; idempotent. */
export async function releaseLeaseSlot(key: ItemKey, runKey: string): Promise<void> {
  await conditionally(
    documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: "REMOVE runs.#run",
        ConditionExpression: "attribute_exists(runs)",
        ExpressionAttributeNames: { "#run": runKey },
      }),
    ),
  );
}

/** The runs holding a slot now (tests and operators). */
export async function activeRunLeases(organizationId: string): Promise<ActiveRunLeases> {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.activeRuns(organizationId), ConsistentRead: true }),
  );
  return (output.Item?.runs as ActiveRunLeases | undefined) ?? {};
}
