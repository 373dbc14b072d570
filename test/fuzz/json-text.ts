/**
 * Values the fuzzer puts in request bodies, and their JSON text. Two markers go beyond what
 * `JSON.stringify` can say: {@link RawJson} is written verbatim (numbers that do not survive a
 * round trip such as `1e400` or `-0.0`, 5,000-deep nesting built as text, duplicate keys), and
 * {@link FixtureRef} names an id of the fuzz organization's fixtures, resolved only when the
 * request is sent (fixtures are recreated while the fuzzer runs, so generated requests hold names,
 * not ids).
 */
export class RawJson {
  constructor(
    readonly text: string,
    /** What the text is, for failure reports (the text itself may be megabytes). */
    readonly description: string,
  ) {}
}

export class FixtureRef {
  constructor(
    /** A fixture id name such as `hubId`, or `foreign:hubId` for the bystander organization's. */
    readonly name: string,
  ) {}
}

export type FixtureResolver = (name: string) => string;

/** JSON text of a fuzz value; own `__proto__` keys are written like any other key. */
export function toJsonText(value: unknown, resolve: FixtureResolver): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof FixtureRef) return JSON.stringify(resolve(value.name));
  if (value === null) return "null";
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : Number.isFinite(value) ? String(value) : "null";
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : toJsonText(item, resolve))).join(",")}]`;
  if (typeof value === "object") {
    const members: string[] = [];
    for (const key of Object.keys(value)) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) members.push(`${JSON.stringify(key)}:${toJsonText(member, resolve)}`);
    }
    return `{${members.join(",")}}`;
  }
  return "null";
}

/** A fuzz value as a plain string (query values, path segments, multipart text parts). */
export function toPlainText(value: unknown, resolve: FixtureResolver): string {
  if (typeof value === "string") return value;
  if (value instanceof FixtureRef) return resolve(value.name);
  if (value instanceof RawJson) return value.text;
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  return toJsonText(value, resolve);
}

/** A short human description of a fuzz value for reports: never megabytes. */
export function describeValue(value: unknown): string {
  if (value instanceof RawJson) return value.description;
  if (value instanceof FixtureRef) return `<${value.name}>`;
  if (typeof value === "string") {
    if (value.length > 120) return `"${JSON.stringify(value.slice(0, 24)).slice(1, -1)}…" (${value.length} chars)`;
    return JSON.stringify(value);
  }
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  let text: string;
  try {
    text = toJsonText(value, (name) => `<${name}>`);
  } catch {
    text = String(value);
  }
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}

/** Object with an own, enumerable key that would otherwise set the prototype (`__proto__`). */
export function withOwnKey(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const existing of Object.keys(target))
    Object.defineProperty(copy, existing, { value: target[existing], enumerable: true, writable: true, configurable: true });
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}
