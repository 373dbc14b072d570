import { z } from "zod";

/** Building blocks shared by the resource schemas. */

export const idSchema = z.string().regex(/^[0-9a-f]{24}$/, "must be a 24-character lowercase hex id");

/** A wall-clock time of day, `HH:mm`, 00:00–23:59. */
export const timeOfDaySchema = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "must be a time HH:mm between 00:00 and 23:59");

export function minutesOfDay(time: string): number {
  const [hours, minutes] = time.split(":").map(Number);
  return (hours ?? 0) * 60 + (minutes ?? 0);
}

/** Query parameters every list accepts (ARCHITECTURE.md §3). */
export const pageQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(4096).optional(),
});

export function pageQuery<T extends z.ZodRawShape>(filters: T) {
  return pageQuerySchema.extend(filters);
}

export const errorBodySchema = z.object({
  status: z.literal(false),
  message: z.string(),
  failedCode: z.string(),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});

/** `{ status: true, message, data }` */
export function successBodySchema<T extends z.ZodType>(data: T, key = "data") {
  return z.object({ status: z.literal(true), message: z.string(), [key]: data });
}

export function pageBodySchema<T extends z.ZodType>(item: T, key = "data") {
  return z.object({ status: z.literal(true), message: z.string(), [key]: z.array(item), nextCursor: z.string().nullable() });
}
