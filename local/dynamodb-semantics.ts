import { createServer, request as httpRequest, Agent, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  DeleteItemCommand,
  ScanCommand,
  type AttributeValue,
  type TableDescription,
} from "@aws-sdk/client-dynamodb";

/**
 * Production DynamoDB behaviour that DynamoDB Local does not have, as an HTTP proxy in front of it:
 * transaction conflicts, throttling and global secondary index lag (docs/architecture.md, "DynamoDB
 * semantics the tests model", names the AWS rules and where AWS documents them).
 *
 * A proxy rather than SDK middleware: every client reaches it through AWS_ENDPOINT_URL_DYNAMODB —
 * the gateway's handlers, the job threads (worker_threads with their own SDK clients), test files,
 * operator scripts — so one in-flight set sees all of them, and no production module changes.
 *
 * Conflicts are decided on a logical in-flight set, never on timing: a TransactWriteItems holds each
 * of its items (ConditionCheck included) from the moment the proxy accepts it until DynamoDB Local
 * has answered plus `transactionHoldMs`, or until `releaseHeldTransactions()` when holds are paused.
 * A transaction naming a held item is cancelled (`TransactionCanceledException`, reason
 * `TransactionConflict` on each held item); a single write on a held item gets
 * `TransactionConflictException`. Neither reaches DynamoDB Local.
 */

export type ThrottleErrorName = "ProvisionedThroughputExceededException" | "ThrottlingException";

export interface DynamoDbSemanticsOptions {
  /** Model transaction conflicts (default true). */
  conflicts: boolean;
  /** How long a transaction keeps its items after DynamoDB Local answered, in ms (default 0). */
  transactionHoldMs: number;
  /** Share of calls (of items, for batch calls) throttled, 0–1 (default 0). */
  throttleRate: number;
  /** The operations throttling applies to (e.g. only the writes); undefined: every data-plane call. */
  throttleOperations?: string[];
  /** The error a throttled single-item call or query gets (on-demand tables answer ThrottlingException). */
  throttleError: ThrottleErrorName;
  /** Seed of the throttling draws, so a run can be repeated. */
  seed: number;
  /**
   * Index lag: 0 = none; a number = each write reaches the global secondary indexes that many ms
   * after it committed; "manual" = only when `propagateIndexes()` is called.
   */
  indexLag: number | "manual";
  /** Record every call with the item images before and after it (the write-cost bench). */
  capture: boolean;
}

export const defaultSemanticsOptions: DynamoDbSemanticsOptions = {
  conflicts: true,
  transactionHoldMs: 0,
  throttleRate: 0,
  throttleError: "ProvisionedThroughputExceededException",
  seed: 1,
  indexLag: 0,
  capture: false,
};

/** The `strict` preset of `npm start -- --dynamodb-semantics strict` and of the strict test files. */
export const strictSemanticsOptions: Partial<DynamoDbSemanticsOptions> = { conflicts: true, transactionHoldMs: 10 };

export type Item = Record<string, AttributeValue>;

/**
 * A request or answer body of DynamoDB's JSON wire protocol, as parsed from the socket: the proxy sees
 * every operation's body before the SDK's types could vouch for it, and only reads the few fields it models.
 */
// biome-ignore lint/suspicious/noExplicitAny: raw wire JSON (see above); typing it would restate the whole DynamoDB API
export type WireJson = any;

/** One item a call touched, with its images when capturing. */
export interface CapturedItem {
  table: string;
  key: Item;
  /** Put, Update, Delete, ConditionCheck, Get (reads). */
  action: string;
  before?: Item;
  after?: Item;
}

export interface CapturedCall {
  operation: string;
  request: WireJson;
  status: number;
  response: WireJson;
  /** Items written or checked (writes), with images; for reads, the items read (full images, before any filter). */
  items: CapturedItem[];
  /** Reads: strongly consistent. */
  consistent?: boolean;
  /** Reads: the index read, if any. */
  indexName?: string;
}

export interface SemanticsCounters {
  transactions: number;
  transactionConflicts: number;
  singleWriteConflicts: number;
  throttledCalls: number;
  throttledBatchItems: number;
}

export interface DynamoDbSemanticsProxy {
  endpoint: string;
  options: DynamoDbSemanticsOptions;
  configure(options: Partial<DynamoDbSemanticsOptions>): void;
  counters(): SemanticsCounters;
  resetCounters(): void;
  /** While paused, finished transactions keep their items until `releaseHeldTransactions()`. */
  pauseReleases(): void;
  releaseHeldTransactions(): void;
  /**
   * Makes the next `count` TransactWriteItems arrive together, whatever the machine's load: each
   * waits at the proxy until `count` have arrived (or `timeoutMs` passed), then all go on in order
   * of arrival. Resolves to how many were gathered. Calls that race for one slot then meet the
   * model every time instead of when the scheduler happens to overlap them.
   */
  gatherTransactions(count: number, timeoutMs: number): Promise<number>;
  /** Items held by in-flight transactions right now. */
  heldItemCount(): number;
  /** Applies every pending write to the index view (index lag "manual" or a wait cut short). */
  propagateIndexes(): Promise<void>;
  /** Calls recorded since the last `takeCaptured()` (capture on). */
  takeCaptured(): CapturedCall[];
  /** The transaction attempts (the latest 20,000), in order of arrival, with their logical in-flight intervals. */
  transactionLog(): TransactionRecord[];
  stop(): Promise<void>;
}

export interface TransactionRecord {
  id: number;
  items: string[];
  /** Logical clock at arrival and at release (undefined while held). */
  arrivedAt: number;
  releasedAt?: number;
  outcome: "committed" | "conflict" | "throttled" | "cancelled" | "failed";
  /** Transactions holding the items this one was refused on. */
  conflictedWith: number[];
}

const jsonType = "application/x-amz-json-1.0";
const typePrefix = "com.amazonaws.dynamodb.v20120810#";
const conflictMessage = "Transaction is ongoing for the item";
const throttleMessages: Record<ThrottleErrorName, string> = {
  ProvisionedThroughputExceededException:
    "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.",
  ThrottlingException:
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly.",
};
const throttlingReasonMessage =
  "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly.";

/** Transaction attempts kept for `transactionLog()`. */
const transactionLogLimit = 20_000;

/** Mulberry32: a small seeded generator, so a throttling run repeats exactly. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

function jsonAnswer(status: number, body: unknown): Answer {
  return { status, headers: { "content-type": jsonType }, body: Buffer.from(JSON.stringify(body)) };
}

function errorAnswer(name: string, message: string, extra: Record<string, unknown> = {}): Answer {
  return jsonAnswer(400, { __type: `${typePrefix}${name}`, message, ...extra });
}

function cancellation(codes: string[]): Answer {
  const reasons = codes.map((code) =>
    code === "None"
      ? { Code: "None" }
      : { Code: code, Message: code === "TransactionConflict" ? conflictMessage : throttlingReasonMessage },
  );
  return errorAnswer(
    "TransactionCanceledException",
    `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(", ")}]`,
    {
      CancellationReasons: reasons,
    },
  );
}

export async function startDynamoDbSemanticsProxy(
  upstream: string,
  initial: Partial<DynamoDbSemanticsOptions> = {},
): Promise<DynamoDbSemanticsProxy> {
  const options: DynamoDbSemanticsOptions = { ...defaultSemanticsOptions, ...initial };
  let random = seededRandom(options.seed);
  const upstreamUrl = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  // Harness calls (key schemas, images, the index view) go straight to DynamoDB Local.
  const direct = new DynamoDBClient({
    endpoint: upstream,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
  });

  let clock = 0;
  const tick = () => ++clock;
  let nextTransactionId = 1;
  /** Item id -> the transaction holding it. */
  const held = new Map<string, number>();
  /** Item id -> number of single or batch writes in flight on it (TransactGetItems conflicts with them). */
  const writing = new Map<string, number>();
  const transactions: TransactionRecord[] = [];
  let releasesPaused = false;
  const pausedReleases: Array<() => void> = [];
  let gathering: { count: number; waiting: Array<() => void>; open: () => void } | undefined;
  let counters: SemanticsCounters = {
    transactions: 0,
    transactionConflicts: 0,
    singleWriteConflicts: 0,
    throttledCalls: 0,
    throttledBatchItems: 0,
  };
  let captured: CapturedCall[] = [];

  // ---- table key schemas ----
  const descriptions = new Map<string, Promise<TableDescription>>();
  const describe = (table: string): Promise<TableDescription> => {
    let description = descriptions.get(table);
    if (!description) {
      description = direct.send(new DescribeTableCommand({ TableName: table })).then((output) => output.Table as TableDescription);
      description.catch(() => descriptions.delete(table));
      descriptions.set(table, description);
    }
    return description;
  };
  const keyNames = async (table: string): Promise<string[]> =>
    ((await describe(table)).KeySchema ?? []).map((element) => element.AttributeName as string);
  const keyOf = async (table: string, item: Item): Promise<Item> =>
    Object.fromEntries((await keyNames(table)).map((name) => [name, item[name] as AttributeValue]));
  const itemId = (table: string, key: Item) =>
    JSON.stringify([
      table,
      ...Object.keys(key)
        .sort()
        .map((name) => key[name]),
    ]);

  // ---- index lag: a lagged copy of each table that index queries read ----
  let viewGeneration = 0;
  const views = new Map<string, Promise<string>>();
  const pendingPropagations = new Set<{ apply: () => Promise<void>; timer?: NodeJS.Timeout }>();
  const lastApplied = new Map<string, number>();
  let propagationSequence = 0;
  const lagOn = () => options.indexLag === "manual" || options.indexLag > 0;

  const ensureView = (table: string): Promise<string> => {
    let view = views.get(table);
    if (!view) {
      view = (async () => {
        const description = await describe(table);
        const name = `${table}.index-view.${viewGeneration}`;
        await direct.send(
          new CreateTableCommand({
            TableName: name,
            BillingMode: "PAY_PER_REQUEST",
            AttributeDefinitions: description.AttributeDefinitions,
            KeySchema: description.KeySchema,
            GlobalSecondaryIndexes: description.GlobalSecondaryIndexes?.map((index) => ({
              IndexName: index.IndexName,
              KeySchema: index.KeySchema,
              Projection: index.Projection,
            })),
          }),
        );
        let start: Item | undefined;
        do {
          const page = await direct.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }));
          for (const item of page.Items ?? []) await direct.send(new PutItemCommand({ TableName: name, Item: item }));
          start = page.LastEvaluatedKey;
        } while (start);
        return name;
      })();
      view.catch(() => views.delete(table));
      views.set(table, view);
    }
    return view;
  };

  /** Before a write: the index view must exist before the write, or its first copy would already hold it. */
  const prepareIndexView = async (tables: Iterable<string>) => {
    if (!lagOn()) return;
    for (const table of new Set(tables)) await ensureView(table);
  };

  /** After a committed write: the item's new image reaches the index view once the lag has passed. */
  const scheduleIndexWrite = async (table: string, key: Item) => {
    if (!lagOn()) return;
    const view = await ensureView(table);
    const output = await direct.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }));
    const image = output.Item;
    const id = itemId(table, key);
    const sequence = ++propagationSequence;
    const entry: { apply: () => Promise<void>; timer?: NodeJS.Timeout } = {
      apply: async () => {
        pendingPropagations.delete(entry);
        if (entry.timer) clearTimeout(entry.timer);
        if ((lastApplied.get(id) ?? 0) > sequence) return;
        lastApplied.set(id, sequence);
        if (image) await direct.send(new PutItemCommand({ TableName: view, Item: image }));
        else await direct.send(new DeleteItemCommand({ TableName: view, Key: key }));
      },
    };
    pendingPropagations.add(entry);
    if (typeof options.indexLag === "number") entry.timer = setTimeout(() => void entry.apply().catch(() => undefined), options.indexLag);
  };

  // ---- forwarding ----
  const forward = (path: string, headers: IncomingHttpHeaders, body: Buffer): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: upstreamUrl.hostname,
          port: upstreamUrl.port,
          method: "POST",
          path,
          headers: { ...headers, host: upstreamUrl.host, "content-length": String(body.length) },
          agent,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => {
            const responseHeaders: Record<string, string> = {};
            for (const [name, value] of Object.entries(response.headers)) if (typeof value === "string") responseHeaders[name] = value;
            resolve({ status: response.statusCode ?? 500, headers: responseHeaders, body: Buffer.concat(chunks) });
          });
          response.on("error", reject);
        },
      );
      outgoing.on("error", reject);
      outgoing.end(body);
    });

  /** Forwards a changed request body (the CRC of the answer no longer applies to a changed answer either). */
  const forwardJson = async (path: string, headers: IncomingHttpHeaders, body: unknown) =>
    forward(path, headers, Buffer.from(JSON.stringify(body)));
  const parsed = (answer: Answer): WireJson => {
    try {
      return JSON.parse(answer.body.toString("utf8") || "{}");
    } catch {
      return {};
    }
  };
  const rewritten = (answer: Answer, body: unknown): Answer => {
    const headers = { ...answer.headers };
    delete headers["x-amz-crc32"];
    delete headers["content-length"];
    return { status: answer.status, headers, body: Buffer.from(JSON.stringify(body)) };
  };

  const throttled = (operation: string) =>
    options.throttleRate > 0 &&
    (!options.throttleOperations || options.throttleOperations.includes(operation)) &&
    random() < options.throttleRate;
  const throttleAnswer = () => {
    counters.throttledCalls += 1;
    return errorAnswer(options.throttleError, throttleMessages[options.throttleError]);
  };

  const images = async (table: string, key: Item): Promise<Item | undefined> =>
    (await direct.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;

  // ---- transactions ----
  interface TransactionItem {
    table: string;
    key: Item;
    action: string;
  }
  const writeItemsOf = async (request: WireJson): Promise<TransactionItem[]> =>
    Promise.all(
      (request.TransactItems ?? []).map(async (entry: WireJson) => {
        const [action, body] = Object.entries(entry)[0] as [string, WireJson];
        const key = action === "Put" ? await keyOf(body.TableName, body.Item) : body.Key;
        return { table: body.TableName as string, key: key as Item, action };
      }),
    );

  const release = (record: TransactionRecord) => {
    for (const id of record.items) if (held.get(id) === record.id) held.delete(id);
    record.releasedAt = tick();
  };
  const releaseLater = (record: TransactionRecord) => {
    const go = () => release(record);
    if (releasesPaused) pausedReleases.push(go);
    else if (options.transactionHoldMs > 0) setTimeout(go, options.transactionHoldMs);
    else go();
  };

  async function transactWrite(path: string, headers: IncomingHttpHeaders, raw: Buffer, request: WireJson): Promise<Answer> {
    if (gathering) {
      const gate = gathering;
      const arrived = new Promise<void>((go) => gate.waiting.push(go));
      if (gate.waiting.length >= gate.count) gate.open();
      await arrived;
    }
    counters.transactions += 1;
    const items = await writeItemsOf(request);
    const ids = items.map((item) => itemId(item.table, item.key));
    const record: TransactionRecord = { id: nextTransactionId++, items: ids, arrivedAt: tick(), outcome: "committed", conflictedWith: [] };
    transactions.push(record);
    // A long `npm start` keeps only the recent attempts.
    if (transactions.length > transactionLogLimit) transactions.splice(0, transactions.length - transactionLogLimit);
    if (throttled("TransactWriteItems")) {
      record.outcome = "throttled";
      record.releasedAt = record.arrivedAt;
      counters.throttledCalls += 1;
      const victim = Math.floor(random() * ids.length);
      return cancellation(ids.map((_, index) => (index === victim ? "ThrottlingError" : "None")));
    }
    if (options.conflicts) {
      const holders = ids.map((id) => held.get(id));
      if (holders.some((holder) => holder !== undefined)) {
        record.outcome = "conflict";
        record.releasedAt = record.arrivedAt;
        record.conflictedWith = [...new Set(holders.filter((holder): holder is number => holder !== undefined))];
        counters.transactionConflicts += 1;
        return cancellation(holders.map((holder) => (holder === undefined ? "None" : "TransactionConflict")));
      }
      for (const id of ids) held.set(id, record.id);
    }
    await prepareIndexView(items.map((item) => item.table));
    const before = options.capture ? await Promise.all(items.map((item) => images(item.table, item.key))) : [];
    let answer: Answer;
    try {
      answer = await forward(path, headers, raw);
    } catch (error) {
      record.outcome = "failed";
      if (options.conflicts) release(record);
      throw error;
    }
    if (answer.status !== 200) record.outcome = parsed(answer).__type?.endsWith("TransactionCanceledException") ? "cancelled" : "failed";
    if (options.conflicts) releaseLater(record);
    else record.releasedAt = tick();
    if (answer.status === 200)
      for (const item of items) if (item.action !== "ConditionCheck") await scheduleIndexWrite(item.table, item.key);
    if (options.capture) {
      const after = await Promise.all(items.map((item) => images(item.table, item.key)));
      captured.push({
        operation: "TransactWriteItems",
        request,
        status: answer.status,
        response: parsed(answer),
        items: items.map((item, index) => ({ ...item, before: before[index], after: after[index] })),
      });
    }
    return answer;
  }

  async function transactGet(path: string, headers: IncomingHttpHeaders, raw: Buffer, request: WireJson): Promise<Answer> {
    const items: TransactionItem[] = (request.TransactItems ?? []).map((entry: WireJson) => ({
      table: entry.Get.TableName,
      key: entry.Get.Key,
      action: "Get",
    }));
    const ids = items.map((item) => itemId(item.table, item.key));
    if (throttled("TransactGetItems")) {
      counters.throttledCalls += 1;
      const victim = Math.floor(random() * ids.length);
      return cancellation(ids.map((_, index) => (index === victim ? "ThrottlingError" : "None")));
    }
    if (options.conflicts && ids.some((id) => held.has(id) || writing.has(id))) {
      counters.transactionConflicts += 1;
      return cancellation(ids.map((id) => (held.has(id) || writing.has(id) ? "TransactionConflict" : "None")));
    }
    const answer = await forward(path, headers, raw);
    if (options.capture) {
      const responses: WireJson[] = parsed(answer).Responses ?? [];
      // Capacity counts the whole item, whatever the projection: a projected answer is read again whole.
      const projected = (request.TransactItems ?? []).map((entry: WireJson) => Boolean(entry.Get.ProjectionExpression));
      const whole = await Promise.all(
        items.map((item, index) => (projected[index] && responses[index]?.Item ? images(item.table, item.key) : responses[index]?.Item)),
      );
      captured.push({
        operation: "TransactGetItems",
        request,
        status: answer.status,
        response: parsed(answer),
        items: items.map((item, index) => ({ ...item, after: whole[index] })),
      });
    }
    return answer;
  }

  // ---- single-item writes ----
  async function singleWrite(
    operation: string,
    path: string,
    headers: IncomingHttpHeaders,
    raw: Buffer,
    request: WireJson,
  ): Promise<Answer> {
    const table = request.TableName as string;
    const key = operation === "PutItem" ? await keyOf(table, request.Item) : (request.Key as Item);
    const id = itemId(table, key);
    if (throttled(operation)) return throttleAnswer();
    if (options.conflicts && held.has(id)) {
      counters.singleWriteConflicts += 1;
      return errorAnswer("TransactionConflictException", conflictMessage);
    }
    writing.set(id, (writing.get(id) ?? 0) + 1);
    await prepareIndexView([table]);
    const before = options.capture ? await images(table, key) : undefined;
    let answer: Answer;
    try {
      answer = await forward(path, headers, raw);
    } finally {
      const count = (writing.get(id) ?? 1) - 1;
      if (count === 0) writing.delete(id);
      else writing.set(id, count);
    }
    if (answer.status === 200) await scheduleIndexWrite(table, key);
    if (options.capture) {
      const after = await images(table, key);
      const action = { PutItem: "Put", UpdateItem: "Update", DeleteItem: "Delete" }[operation] as string;
      captured.push({
        operation,
        request,
        status: answer.status,
        response: parsed(answer),
        items: [{ table, key, action, before, after }],
      });
    }
    return answer;
  }

  // ---- batches: throttled items come back unprocessed ----
  async function batchWrite(path: string, headers: IncomingHttpHeaders, request: WireJson): Promise<Answer> {
    const processed: Record<string, WireJson[]> = {};
    const unprocessed: Record<string, WireJson[]> = {};
    let total = 0;
    let refused = 0;
    for (const [table, entries] of Object.entries(request.RequestItems ?? {}) as Array<[string, WireJson[]]>) {
      for (const entry of entries) {
        total += 1;
        if (throttled("BatchWriteItem")) {
          refused += 1;
          unprocessed[table] = [...(unprocessed[table] ?? []), entry];
        } else processed[table] = [...(processed[table] ?? []), entry];
      }
    }
    if (total > 0 && refused === total) return throttleAnswer();
    counters.throttledBatchItems += refused;
    const written: TransactionItem[] = [];
    for (const [table, entries] of Object.entries(processed)) {
      for (const entry of entries) {
        const key = entry.PutRequest ? await keyOf(table, entry.PutRequest.Item) : entry.DeleteRequest.Key;
        written.push({ table, key, action: entry.PutRequest ? "Put" : "Delete" });
      }
    }
    const ids = written.map((item) => itemId(item.table, item.key));
    for (const id of ids) writing.set(id, (writing.get(id) ?? 0) + 1);
    await prepareIndexView(written.map((item) => item.table));
    const before = options.capture ? await Promise.all(written.map((item) => images(item.table, item.key))) : [];
    let answer: Answer;
    try {
      answer = await forwardJson(path, headers, { ...request, RequestItems: processed });
    } finally {
      for (const id of ids) {
        const count = (writing.get(id) ?? 1) - 1;
        if (count === 0) writing.delete(id);
        else writing.set(id, count);
      }
    }
    if (answer.status !== 200) return answer;
    const body = parsed(answer);
    for (const [table, entries] of Object.entries(unprocessed)) {
      body.UnprocessedItems ??= {};
      body.UnprocessedItems[table] = [...(body.UnprocessedItems[table] ?? []), ...entries];
    }
    for (const item of written) await scheduleIndexWrite(item.table, item.key);
    if (options.capture) {
      const after = await Promise.all(written.map((item) => images(item.table, item.key)));
      captured.push({
        operation: "BatchWriteItem",
        request,
        status: answer.status,
        response: body,
        items: written.map((item, index) => ({ ...item, before: before[index], after: after[index] })),
      });
    }
    return rewritten(answer, body);
  }

  async function batchGet(path: string, headers: IncomingHttpHeaders, request: WireJson): Promise<Answer> {
    const processed: Record<string, WireJson> = {};
    const unprocessed: Record<string, WireJson> = {};
    let total = 0;
    let refused = 0;
    for (const [table, entry] of Object.entries(request.RequestItems ?? {}) as Array<[string, WireJson]>) {
      const { Keys, ...rest } = entry;
      for (const key of Keys as Item[]) {
        total += 1;
        const refuse = throttled("BatchGetItem");
        if (refuse) refused += 1;
        const target = refuse ? unprocessed : processed;
        target[table] ??= { ...rest, Keys: [] };
        target[table].Keys.push(key);
      }
    }
    if (total > 0 && refused === total) return throttleAnswer();
    counters.throttledBatchItems += refused;
    const answer = await forwardJson(path, headers, { ...request, RequestItems: processed });
    if (answer.status !== 200) return answer;
    const body = parsed(answer);
    for (const [table, entry] of Object.entries(unprocessed)) {
      const existing = body.UnprocessedKeys?.[table];
      body.UnprocessedKeys ??= {};
      body.UnprocessedKeys[table] = existing ? { ...existing, Keys: [...existing.Keys, ...entry.Keys] } : entry;
    }
    if (options.capture) {
      const items: CapturedItem[] = [];
      for (const [table, found] of Object.entries(body.Responses ?? {}) as Array<[string, Item[]]>) {
        const entry = request.RequestItems?.[table] ?? {};
        const action = entry.ConsistentRead ? "GetConsistent" : "Get";
        if (entry.ProjectionExpression || entry.AttributesToGet) {
          // Capacity counts the whole item, whatever the projection (a projected answer may not even
          // hold the key): each key asked for that was found is read again whole.
          for (const key of (processed[table]?.Keys ?? []) as Item[]) {
            const whole = await images(table, key);
            if (whole) items.push({ table, key, action, after: whole });
          }
        } else for (const item of found) items.push({ table, key: await keyOf(table, item), action, after: item });
      }
      captured.push({ operation: "BatchGetItem", request, status: answer.status, response: body, items });
    }
    return rewritten(answer, body);
  }

  // ---- reads ----
  async function read(operation: string, path: string, headers: IncomingHttpHeaders, raw: Buffer, request: WireJson): Promise<Answer> {
    if (throttled(operation)) return throttleAnswer();
    let answer: Answer;
    const table = request.TableName as string;
    if (request.IndexName && lagOn() && (operation === "Query" || operation === "Scan")) {
      const view = await ensureView(table);
      answer = await forwardJson(path, headers, { ...request, TableName: view });
      const body = parsed(answer);
      if (body.ConsumedCapacity?.TableName) body.ConsumedCapacity.TableName = table;
      answer = rewritten(answer, body);
    } else answer = await forward(path, headers, raw);
    if (options.capture && answer.status === 200) {
      const body = parsed(answer);
      let readItems: Item[] = [];
      if (operation === "GetItem") {
        // Capacity counts the whole item, whatever the projection.
        const whole = body.Item && (request.ProjectionExpression || request.AttributesToGet) ? await images(table, request.Key) : body.Item;
        readItems = whole ? [whole] : [];
      } else if (request.FilterExpression || request.ProjectionExpression || request.Select || request.AttributesToGet) {
        // Capacity counts what the key condition read, before any filter or projection.
        const { FilterExpression, ProjectionExpression, Select, AttributesToGet, ...unfiltered } = request;
        const names = unfiltered.ExpressionAttributeNames ? { ...unfiltered.ExpressionAttributeNames } : undefined;
        const again = parsed(await forwardJson(path, headers, { ...unfiltered, ...(names ? { ExpressionAttributeNames: names } : {}) }));
        readItems = again.Items ?? [];
      } else readItems = body.Items ?? [];
      captured.push({
        operation,
        request,
        status: answer.status,
        response: body,
        consistent: Boolean(request.ConsistentRead),
        indexName: request.IndexName,
        items: readItems.map((item) => ({ table, key: {}, action: "Read", after: item })),
      });
    } else if (options.capture) captured.push({ operation, request, status: answer.status, response: parsed(answer), items: [] });
    return answer;
  }

  async function handle(operation: string, path: string, headers: IncomingHttpHeaders, raw: Buffer): Promise<Answer> {
    let request: WireJson = {};
    try {
      request = JSON.parse(raw.toString("utf8") || "{}");
    } catch {
      return forward(path, headers, raw);
    }
    switch (operation) {
      case "TransactWriteItems":
        return transactWrite(path, headers, raw, request);
      case "TransactGetItems":
        return transactGet(path, headers, raw, request);
      case "PutItem":
      case "UpdateItem":
      case "DeleteItem":
        return singleWrite(operation, path, headers, raw, request);
      case "BatchWriteItem":
        return batchWrite(path, headers, request);
      case "BatchGetItem":
        return batchGet(path, headers, request);
      case "GetItem":
      case "Query":
      case "Scan":
        return read(operation, path, headers, raw, request);
      case "DeleteTable": {
        const answer = await forward(path, headers, raw);
        descriptions.delete(request.TableName);
        return answer;
      }
      default:
        return forward(path, headers, raw);
    }
  }

  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const target = String(incoming.headers["x-amz-target"] ?? "");
      const operation = target.slice(target.indexOf(".") + 1);
      const headers = { ...incoming.headers };
      delete headers["content-length"];
      handle(operation, incoming.url ?? "/", headers, Buffer.concat(chunks))
        .then((answer) => {
          outgoing.writeHead(answer.status, { ...answer.headers, "content-length": String(answer.body.length) });
          outgoing.end(answer.body);
        })
        .catch((error: unknown) => {
          const answer = jsonAnswer(500, {
            __type: `${typePrefix}InternalServerError`,
            message: `semantics proxy: ${(error as Error).message}`,
          });
          outgoing.writeHead(answer.status, answer.headers);
          outgoing.end(answer.body);
        });
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    endpoint,
    options,
    configure(changes) {
      const lagWasOn = lagOn();
      Object.assign(options, changes);
      if (changes.seed !== undefined) random = seededRandom(changes.seed);
      if (lagWasOn && !lagOn()) {
        // Index lag off: drop the lagged copies; switching it on again starts from the table as it is then.
        for (const entry of pendingPropagations) if (entry.timer) clearTimeout(entry.timer);
        pendingPropagations.clear();
        const dropping = [...views.values()];
        views.clear();
        viewGeneration += 1;
        for (const view of dropping)
          void view.then((name) => direct.send(new DeleteTableCommand({ TableName: name }))).catch(() => undefined);
      }
    },
    counters: () => ({ ...counters }),
    resetCounters() {
      counters = { transactions: 0, transactionConflicts: 0, singleWriteConflicts: 0, throttledCalls: 0, throttledBatchItems: 0 };
    },
    pauseReleases() {
      releasesPaused = true;
    },
    releaseHeldTransactions() {
      releasesPaused = false;
      for (const go of pausedReleases.splice(0)) go();
    },
    heldItemCount: () => held.size,
    gatherTransactions(count, timeoutMs) {
      return new Promise<number>((gathered) => {
        const gate = {
          count,
          waiting: [] as Array<() => void>,
          open() {
            clearTimeout(timer);
            if (gathering === gate) gathering = undefined;
            const going = gate.waiting.splice(0);
            for (const go of going) go();
            gathered(going.length);
          },
        };
        const timer = setTimeout(() => gate.open(), timeoutMs);
        gathering = gate;
      });
    },
    async propagateIndexes() {
      for (const entry of [...pendingPropagations]) await entry.apply();
    },
    takeCaptured() {
      const calls = captured;
      captured = [];
      return calls;
    },
    transactionLog: () => transactions.map((record) => ({ ...record })),
    async stop() {
      gathering?.open();
      for (const entry of pendingPropagations) if (entry.timer) clearTimeout(entry.timer);
      pendingPropagations.clear();
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
      agent.destroy();
      direct.destroy();
    },
  };
}
