/**
 * Conservative estimate of the DynamoDB item a record is stored as (pure). DynamoDB refuses items
 * over 400 KB; the record item carries the values, the index it wrote and its own fields, plus key
 * attributes the store adds (PK/SK, GSI2 keys, entity, version, hubScope), which KEY_RESERVE_BYTES
 * covers. Sizes follow DynamoDB's rules, rounded up: UTF-8 bytes of every attribute name and
 * string, 21 bytes per number, 1 per boolean or null, 3 per map or list plus 1 per element.
 */

/** DynamoDB's item size limit. */
export const MAX_ITEM_BYTES = 400 * 1024;
/** Key and bookkeeping attributes added by the store (dataId ≤ 200 characters appears in three of them). */
export const KEY_RESERVE_BYTES = 4 * 1024;
/** What a record's own attributes may take. */
export const MAX_RECORD_BYTES = MAX_ITEM_BYTES - KEY_RESERVE_BYTES;

const NUMBER_BYTES = 21;

/** Estimated stored size of a value (an attribute value, names of nested map keys included). */
export function estimatedValueBytes(value: unknown): number {
  if (value === undefined) return 0;
  if (value === null || typeof value === "boolean") return 1;
  if (typeof value === "number" || typeof value === "bigint") return NUMBER_BYTES;
  if (typeof value === "string") return Buffer.byteLength(value, "utf8");
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, item) => sum + 1 + estimatedValueBytes(item), 0);
  if (typeof value === "object") {
    return (
      3 +
      Object.entries(value).reduce(
        (sum, [key, item]) => (item === undefined ? sum : sum + 1 + Buffer.byteLength(key, "utf8") + estimatedValueBytes(item)),
        0,
      )
    );
  }
  return Buffer.byteLength(String(value), "utf8");
}

/** Estimated size of an item's attributes (top-level names and values). */
export function estimatedItemBytes(attributes: Record<string, unknown>): number {
  return Object.entries(attributes).reduce(
    (sum, [key, item]) => (item === undefined ? sum : sum + Buffer.byteLength(key, "utf8") + estimatedValueBytes(item)),
    0,
  );
}
