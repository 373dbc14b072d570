import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import type { CapturedCall, Item } from "#local/dynamodb-semantics";

/**
 * Capacity units of DynamoDB calls, computed from the requests the semantics proxy captured with
 * the item images before and after each (local/dynamodb-semantics.ts, `capture`), by the rules of
 * the developer guide ("DynamoDB read and write operations"; "Capacity management for
 * transactions"; "Global secondary indexes", writes): a plain write is 1 WRU per started KB of the
 * larger of the item's old and new image, a transactional one (a ConditionCheck included) 2 per
 * KB; each global secondary index entry written is 1 WRU per KB of its projection (projection ALL
 * here), and an update that changes an index key is a delete plus a put there. Reads are 1 RRU per
 * started 4 KB read strongly consistently, ½ eventually consistently (indexes always), 2 in a
 * transaction; a query is charged on what its key condition read, before any filter.
 */
export interface IndexDefinition {
  indexName: string;
  partitionKey: string;
  sortKey?: string;
}

export interface CallCost {
  operation: string;
  writeUnits: number;
  readUnits: number;
  /** Of writeUnits: the index entries. */
  indexWriteUnits: number;
  /** Items written (base table) or checked. */
  items: number;
}

/** The item's stored size in bytes, as DynamoDB counts it (attribute names plus values). */
export function itemSize(item: Item | undefined): number {
  if (!item) return 0;
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name) + valueSize(value);
  return size;
}

function numberSize(text: string): number {
  const digits = text
    .replace(/^-/, "")
    .replace(/[eE].*$/, "")
    .replace(".", "")
    .replace(/^0+/, "")
    .replace(/0+$/, "");
  return Math.ceil(Math.max(1, digits.length) / 2) + 1 + (text.startsWith("-") ? 1 : 0);
}

/** Binary values arrive base64-encoded in the captured JSON. */
const binarySize = (value: unknown): number =>
  typeof value === "string" ? Buffer.from(value, "base64").length : (value as Uint8Array).length;

function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberSize(value.N);
  if (value.B !== undefined) return binarySize(value.B as unknown);
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS) return value.SS.reduce((sum, entry) => sum + Buffer.byteLength(entry), 0);
  if (value.NS) return value.NS.reduce((sum, entry) => sum + numberSize(entry), 0);
  if (value.BS) return value.BS.reduce((sum, entry) => sum + binarySize(entry as unknown), 0);
  if (value.L) return 3 + value.L.reduce((sum, entry) => sum + 1 + valueSize(entry), 0);
  if (value.M) return 3 + Object.entries(value.M).reduce((sum, [name, entry]) => sum + 1 + Buffer.byteLength(name) + valueSize(entry), 0);
  return 0;
}

const kilobytes = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const fourKilobytes = (bytes: number) => Math.max(1, Math.ceil(bytes / 4096));

function indexKey(index: IndexDefinition, item: Item | undefined): string | undefined {
  if (!item) return undefined;
  const partition = item[index.partitionKey];
  const sort = index.sortKey ? item[index.sortKey] : undefined;
  if (!partition || (index.sortKey && !sort)) return undefined;
  return JSON.stringify([partition, sort]);
}

/** Index write units of one item changing from `before` to `after`. */
export function indexWriteUnits(indexes: readonly IndexDefinition[], before: Item | undefined, after: Item | undefined): number {
  let units = 0;
  const changed = JSON.stringify(sorted(before)) !== JSON.stringify(sorted(after));
  for (const index of indexes) {
    const was = indexKey(index, before);
    const is = indexKey(index, after);
    if (was && is && was === is) units += changed ? kilobytes(itemSize(after)) : 0;
    else {
      if (was) units += kilobytes(itemSize(before));
      if (is) units += kilobytes(itemSize(after));
    }
  }
  return units;
}

function sorted(item: Item | undefined): Array<[string, AttributeValue]> | undefined {
  return item && Object.entries(item).sort(([a], [b]) => a.localeCompare(b));
}

export function costOf(call: CapturedCall, indexes: readonly IndexDefinition[]): CallCost {
  const cost: CallCost = { operation: call.operation, writeUnits: 0, readUnits: 0, indexWriteUnits: 0, items: call.items.length };
  const succeeded = call.status === 200;
  switch (call.operation) {
    case "PutItem":
    case "UpdateItem":
    case "DeleteItem":
    case "BatchWriteItem":
      for (const item of call.items) {
        // A refused conditional write still consumes the write (of the item as it is).
        cost.writeUnits += kilobytes(Math.max(itemSize(item.before), itemSize(item.after)));
        if (succeeded) cost.indexWriteUnits += indexWriteUnits(indexes, item.before, item.after);
      }
      break;
    case "TransactWriteItems":
      for (const item of call.items) {
        cost.writeUnits +=
          2 * kilobytes(item.action === "ConditionCheck" ? itemSize(item.before) : Math.max(itemSize(item.before), itemSize(item.after)));
        if (succeeded && item.action !== "ConditionCheck") cost.indexWriteUnits += indexWriteUnits(indexes, item.before, item.after);
      }
      break;
    case "GetItem":
      cost.readUnits += fourKilobytes(itemSize(call.items[0]?.after)) * (call.consistent ? 1 : 0.5);
      break;
    case "BatchGetItem":
      for (const item of call.items) cost.readUnits += fourKilobytes(itemSize(item.after)) * (item.action === "GetConsistent" ? 1 : 0.5);
      break;
    case "TransactGetItems":
      for (const item of call.items) cost.readUnits += 2 * fourKilobytes(itemSize(item.after));
      break;
    case "Query":
    case "Scan": {
      const bytes = call.items.reduce((sum, item) => sum + itemSize(item.after), 0);
      cost.readUnits += fourKilobytes(bytes) * (call.consistent && !call.indexName ? 1 : 0.5);
      break;
    }
    default:
      break;
  }
  cost.writeUnits += cost.indexWriteUnits;
  return cost;
}

export interface CostSummary {
  calls: number;
  writeUnits: number;
  readUnits: number;
  indexWriteUnits: number;
  itemsWritten: number;
  operations: Record<string, number>;
}

export function summarize(calls: readonly CapturedCall[], indexes: readonly IndexDefinition[]): CostSummary {
  const summary: CostSummary = { calls: calls.length, writeUnits: 0, readUnits: 0, indexWriteUnits: 0, itemsWritten: 0, operations: {} };
  for (const call of calls) {
    const cost = costOf(call, indexes);
    summary.writeUnits += cost.writeUnits;
    summary.readUnits += cost.readUnits;
    summary.indexWriteUnits += cost.indexWriteUnits;
    if (cost.writeUnits > 0) summary.itemsWritten += call.items.filter((item) => item.action !== "ConditionCheck").length;
    summary.operations[call.operation] = (summary.operations[call.operation] ?? 0) + 1;
  }
  return summary;
}
