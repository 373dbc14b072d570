/** Timestamps of data types, records, vehicles and schedules: `Y-m-d H:i:s` in UTC. */
export function formatDateTimeUtc(date: Date): string {
  return date.toISOString().slice(0, 19).replace("T", " ");
}

/** App integration timestamps: ISO 8601 UTC with microseconds (JS clocks give milliseconds, so the last three digits are 0). */
export function formatIsoMicros(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000Z`;
}

const wallClockFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * `Y-m-d H:i` of an instant on the clocks of an IANA zone (an unknown zone reads as UTC). Intl, not
 * a date library: routing result names are made in API functions, whose cold start a library costs.
 */
export function formatWallClockIn(instant: Date, timeZone: string): string {
  let format = wallClockFormats.get(timeZone);
  if (!format) {
    const options = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" } as const;
    try {
      format = new Intl.DateTimeFormat("en-US", { ...options, timeZone });
    } catch {
      format = new Intl.DateTimeFormat("en-US", { ...options, timeZone: "UTC" });
    }
    wallClockFormats.set(timeZone, format);
  }
  const part = Object.fromEntries(format.formatToParts(instant).map(({ type, value }) => [type, value]));
  return `${String(part.year).padStart(4, "0")}-${part.month}-${part.day} ${part.hour}:${part.minute}`;
}
