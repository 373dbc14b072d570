import { ConflictError, PreconditionFailedError, ValidationError } from "#shared/domain/errors";

/**
 * Optimistic concurrency over HTTP. Every stored resource carries a `version` (1 on insert, +1 on
 * each write, shared/store/items.ts); GET answers it as a strong ETag `"<version>"`, and PUT, PATCH
 * and DELETE with `If-Match` only proceed on that version. Pure: no I/O, the services call it
 * between their read and their conditional write, and the write itself is conditional on the same
 * version, so a change in between is caught by DynamoDB (no read-then-write race) and answered 412.
 */

/** `*` (any current version) or one exact version. */
export type IfMatch = "*" | number;

export const formatETag = (version: number): string => `"${version}"`;

/**
 * The If-Match header, or undefined when absent. Only `*` or one strong ETag of ours (`"<n>"`);
 * a weak ETag (`W/"…"`, never matches under the strong comparison If-Match uses), a list or
 * anything else is a 400, so a client mistake never silently turns into an unconditional write.
 */
export function parseIfMatch(header: string | undefined): IfMatch | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === "*") return "*";
  const match = /^"([1-9][0-9]{0,15})"$/.exec(value);
  if (match && Number.isSafeInteger(Number(match[1]))) return Number(match[1]);
  const reason = value.startsWith("W/")
    ? "If-Match must be a strong ETag (weak ETags never match)"
    : value.includes(",")
      ? "If-Match must name one ETag, not a list"
      : 'If-Match must be "*" or an ETag returned by GET, e.g. "3" with its quotes';
  throw ValidationError.single("If-Match", reason, "sys-400");
}

/**
 * The version condition of one request and the version it ends on. Services take it as an optional
 * trailing argument: `check` the version they read (throws 412 on a mismatch), then run their
 * conditional write through `write`, and the handler answers `version` as the ETag.
 */
export class VersionCondition {
  /** The version the request read (GET) or wrote (PUT/PATCH); undefined until known. */
  version: number | undefined;

  constructor(readonly ifMatch?: IfMatch) {}

  /** Records the version read; 412 when If-Match names another one. */
  check(current: number): void {
    if (typeof this.ifMatch === "number" && this.ifMatch !== current) throw new PreconditionFailedError();
    this.version = current;
  }

  /**
   * Runs a write conditional on the version `check` saw and records `nextVersion`. When If-Match
   * named that version and the write lost its condition (the item changed or went away after the
   * read: 409 sys-410, or `false` from a conditional delete), the answer is 412 instead.
   */
  async write<T>(write: () => Promise<T>, nextVersion?: number): Promise<T> {
    const exact = typeof this.ifMatch === "number";
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
