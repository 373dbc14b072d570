import type { GuardEntry } from "#shared/domain/records/schema";
import type { TransactItem } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { claimGuard, releaseGuard } from "#shared/store/transactions";

// Uniqueness guards of record values, shared by record writes (record-store.ts) and entity custom
// values (extension-store.ts); apart from the record store so hub and vehicle writes do not load the
// record schemas and search. The claim and release items themselves are the toolkit's
// (shared/store/transactions.ts), like every other guard's.

/**
 * Who holds uniqueness guards of a data type: a record, or an entity's custom values
 * (shared/store/extension-store.ts). A guard item carries its owner's id as `recordId`.
 */
export interface GuardOwner {
  organizationId: string;
  dataTypeId: string;
  ownerId: string;
  guards: GuardEntry[];
}

const guardKey = (owner: Pick<GuardOwner, "organizationId" | "dataTypeId">, guard: GuardEntry) =>
  keys.uniqueGuard(owner.organizationId, owner.dataTypeId, guard.name, guard.scope, guard.value);
const guardId = (owner: Pick<GuardOwner, "dataTypeId">, guard: GuardEntry) =>
  `${owner.dataTypeId}\u0000${guard.name}\u0000${guard.scope}\u0000${guard.value}`;

/**
 * The transaction items that move an owner's guards from `previous` to `next` (either may be
 * absent): guards no longer held are deleted (if still the owner's), new ones claimed (free or
 * already the owner's; a failed claim is labelled with the guard's name).
 */
export function guardMoves(
  previous: GuardOwner | undefined,
  next: GuardOwner | undefined,
): Array<[TransactItem, { kind: "guard"; name: string } | { kind: "other" }]> {
  const items: Array<[TransactItem, { kind: "guard"; name: string } | { kind: "other" }]> = [];
  const oldGuards = new Map((previous?.guards ?? []).map((guard) => [guardId(previous as GuardOwner, guard), guard]));
  const newGuards = new Map((next?.guards ?? []).map((guard) => [guardId(next as GuardOwner, guard), guard]));
  for (const [id, guard] of oldGuards)
    if (!newGuards.has(id) && previous)
      items.push([releaseGuard(guardKey(previous, guard), "recordId", previous.ownerId), { kind: "other" }]);
  for (const [id, guard] of newGuards)
    if (!oldGuards.has(id) && next)
      items.push([
        claimGuard(guardKey(next, guard), "recordId", next.ownerId, { entity: "recordGuard", dataTypeId: next.dataTypeId }),
        { kind: "guard", name: guard.name },
      ]);
  return items;
}
