/**
 * Lambda's event filtering (the event source mapping's `FilterCriteria`) for the local stream poller,
 * so a record reaches the local publisher exactly when it would on AWS. The subset the stack uses:
 * a pattern is an object whose keys must be present in the record; a leaf is a list of allowed
 * exact values. Any other rule (prefix, numeric, exists …) throws rather than be guessed at: teach it
 * here before the stack uses it.
 * https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html
 */
export type FilterPattern = { readonly [key: string]: FilterPattern | readonly (string | number | boolean | null)[] };

export function matchesFilterPattern(record: unknown, pattern: FilterPattern): boolean {
  if (record === null || typeof record !== "object" || Array.isArray(record)) return false;
  for (const [key, rule] of Object.entries(pattern)) {
    if (!Object.hasOwn(record, key)) return false;
    const value = (record as Record<string, unknown>)[key];
    if (Array.isArray(rule)) {
      for (const allowed of rule) {
        if (allowed !== null && typeof allowed === "object")
          throw new Error(`filter rule ${JSON.stringify(allowed)} is not modelled locally`);
      }
      if (!rule.includes(value as string)) return false;
    } else if (!matchesFilterPattern(value, rule as FilterPattern)) return false;
  }
  return true;
}
