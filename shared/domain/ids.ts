import { randomBytes } from "node:crypto";

/**
 * `_id` values: 24 lowercase hex characters laid out like a MongoDB ObjectId's first field — the
 * 4-byte creation second (big-endian) — followed by 8 bytes from the operating system's CSPRNG,
 * fresh for every id. Ids therefore sort by creation second (runs' "oldest first", newest-first
 * lists and the usage day read that prefix), while nothing after it tells how many ids anyone
 * minted or lets one id predict another (upload ids included). Within one second the order of ids
 * is random, not the order of creation: a list sorted by `_id` orders same-second items
 * arbitrarily (but stably, as ids never change). Ids minted before this layout (5 process bytes
 * plus a 3-byte counter) have the same form and stay valid.
 */
export function newId(now: Date = new Date()): string {
  const seconds = Math.max(0, Math.floor(now.getTime() / 1000))
    .toString(16)
    .padStart(8, "0");
  return `${seconds}${randomBytes(8).toString("hex")}`;
}

export const ID_PATTERN = /^[0-9a-f]{24}$/;
