import { ConflictError, NotFoundError, PreconditionFailedError, ValidationError } from "#shared/domain/errors";

/**
 * Optimistic concurrency over HTTP. Every stored resource carries a `version` (1 on insert, +1 on
 * each write, shared/store/items.ts); GET answers it as a strong ETag `"<version>"`, and PUT, PATCH
 * and DELETE with `If-Match` only proceed on that version. Pure: no I/O, the services call it
 * between their read and their conditional write, and the write itself is conditional on the same
 * version, so a change in between is caught by DynamoDB (no read-then-write race) and answered 412.
 */

/**
 * `*` (any current version), or the versions a list of entity tags can match: RFC 9110 §13.1.1
 * compares If-Match strongly, so weak tags (`W/"3"`) and strong tags that are not one of ours
 * (`"abc"`) match nothing and add no version. An empty list can never match (412).
 */
export type IfMatch = "*" | readonly number[];

export const formatETag = (version: number): string => `"${version}"`;

/** One entity-tag (RFC 9110 §8.8.3: `[W/] DQUOTE *etagc DQUOTE`, etagc = %x21 / %x23-7E / obs-text), then optional whitespace and a comma. */
const ENTITY_TAG = /^\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)/;
/** An If-Match longer than this is refused (a list of ETags of ours fits many times over). */
const MAX_IF_MATCH_LENGTH = 4_096;

/**
 * The If-Match header (RFC 9110 §13.1.1), or undefined when absent: `*`, or a comma-separated
 * list of entity tags. Only a header that is neither is a 400 naming If-Match, so a client mistake
 * never silently turns into an unconditional write; a well-formed list that matches nothing is a
 * false precondition (412, answered when the resource is read).
 */
export function parseIfMatch(header: string | undefined): IfMatch | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === "*") return "*";
  const refuse = (reason: string) => ValidationError.single("If-Match", reason, "sys-400");
  if (value.length > MAX_IF_MATCH_LENGTH) throw refuse(`If-Match must be at most ${MAX_IF_MATCH_LENGTH} characters`);
  const versions: number[] = [];
  let rest = value;
  let tags = 0;
  while (rest.length > 0) {
    // Empty list elements (`"1", , "2"`) are allowed by the list syntax (RFC 9110 §5.6.1).
    const empty = /^\s*,/.exec(rest);
    if (empty) {
      rest = rest.slice(empty[0].length);
      continue;
    }
    const match = ENTITY_TAG.exec(rest);
    if (!match) throw refuse('If-Match must be "*" or a comma-separated list of quoted ETags, e.g. "3" with its quotes');
    tags += 1;
    const [, weak, opaque] = match;
    if (!weak && /^[1-9][0-9]{0,15}$/.test(opaque as string) && Number.isSafeInteger(Number(opaque))) versions.push(Number(opaque));
    rest = rest.slice(match[0].length);
  }
  if (tags === 0) throw refuse('If-Match must be "*" or a comma-separated list of quoted ETags, e.g. "3" with its quotes');
  return versions;
}

/**
 * The version condition of one request and the version it ends on. Services take it as an optional
 * trailing argument: `check` the version they read (throws 412 on a mismatch), then run their
 * conditional write through `write`, and the handler answers `version` as the ETag.
 */
export class VersionCondition {
  /** The version the request read (GET) or wrote (PUT/PATCH); undefined until known. */
  version: number | undefined;
  /** True once the service read the resource the condition is about (`check`). */
  read = false;

  constructor(readonly ifMatch?: IfMatch) {}

  /** Records the version read; 412 when If-Match names no tag of it. */
  check(current: number): void {
    this.read = true;
    if (Array.isArray(this.ifMatch) && !this.ifMatch.includes(current)) throw new PreconditionFailedError();
    this.version = current;
  }

  /**
   * Whether `error`, thrown by the request, means the precondition was false: a resource that is not
   * there has no current representation, so no If-Match (`*` included) is true for it (RFC 9110
   * §13.1.1). Only before the resource was read: a 404 afterwards is about something else.
   */
  failedOnMissing(error: unknown): boolean {
    return this.ifMatch !== undefined && !this.read && error instanceof NotFoundError && error.failedCode === "sys-404";
  }

  /**
   * Runs a write conditional on the version `check` saw and records `nextVersion`. When If-Match
   * named that version and the write lost its condition (the item changed or went away after the
   * read: 409 sys-410, or `false` from a conditional delete), the answer is 412 instead.
   */
  async write<T>(write: () => Promise<T>, nextVersion?: number): Promise<T> {
    const exact = Array.isArray(this.ifMatch);
    let outcome: T;
    try {
      outcome = await write();
    } catch (error) {
      if (exact && error instanceof ConflictError && error.failedCode === "sys-410") throw new PreconditionFailedError();
      throw error;
    }
    if (exact && outcome === false) throw new PreconditionFailedError();
    this.version = nextVersion;
    return outcome;
  }
}

/** Checks a version when a condition was given (`condition?.check(v)` for callers without one). */
export async function writeUnder<T>(condition: VersionCondition | undefined, write: () => Promise<T>, nextVersion?: number): Promise<T> {
  return condition ? condition.write(write, nextVersion) : write();
}
