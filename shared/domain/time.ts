/** Timestamps of data types, records, vehicles and schedules: `Y-m-d H:i:s` in UTC. */
export function formatDateTimeUtc(date: Date): string {
  return date.toISOString().slice(0, 19).replace("T", " ");
}

/** App integration timestamps: ISO 8601 UTC with microseconds (JS clocks give milliseconds, so the last three digits are 0). */
export function formatIsoMicros(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000Z`;
}

/** True when `name` is an IANA zone the runtime's Intl knows. */
export function isValidTimeZone(name: string): boolean {
  if (!name) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name }).format();
    return true;
  } catch {
    return false;
  }
}
