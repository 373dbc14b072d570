import { randomBytes } from "node:crypto";

/**
 * `_id` values: 24 lowercase hex characters laid out like a MongoDB ObjectId (4-byte seconds
 * timestamp, 5 random bytes, 3-byte counter) so ids sort by creation time.
 */
let counter = randomBytes(3).readUIntBE(0, 3);
const processRandom = randomBytes(5).toString("hex");

export function newId(now: Date = new Date()): string {
  counter = (counter + 1) % 0xffffff;
  const seconds = Math.floor(now.getTime() / 1000)
    .toString(16)
    .padStart(8, "0");
  return `${seconds}${processRandom}${counter.toString(16).padStart(6, "0")}`;
}

export const ID_PATTERN = /^[0-9a-f]{24}$/;
