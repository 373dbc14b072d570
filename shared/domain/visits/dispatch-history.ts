import { dispatchedBySchema, type VisitTransition, visitStatuses, type VisitStatus } from "#shared/domain/visits/schema";

/**
 * A dispatch's entry in the visit's history, read from the table's stream. A dispatch assigns up to
 * 1,500 visits with one conditional update each and cannot know the version it produces, which keys
 * the history; writing the entry in that update's transaction would mean a read and a two-item
 * transaction per visit (three times the units). Instead the update stores who dispatched
 * (`dispatchedBy`) and the stream, which carries the images before and after every committed write
 * at least once, derives the entry: its key is the version the write produced, so a replayed record
 * writes the same item again. Pure: the stream consumer writes what this answers.
 *
 * A write is a dispatch when the visit existed before (a hub move re-creates the item), is ASSIGNED
 * after, its version moved, and its `dispatchedBy` changed — so a progress `undo` (EN_ROUTE →
 * ASSIGNED, recorded by its own transaction) and any PATCH of an ASSIGNED visit are not. A re-plan's
 * dispatch of a pinned visit (ASSIGNED → ASSIGNED under a new result) is an entry too.
 */
export interface DispatchHistoryEntry {
  organizationId: string;
  hubId: string;
  visitId: string;
  transition: VisitTransition;
}

/** The entity whose stream records carry dispatches (part of the stream's filter, shared/domain/webhooks/state-changes.ts). */
export const dispatchHistoryEntity = "visit";

type Image = Record<string, unknown> | undefined;

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

export function dispatchHistoryEntryOf(before: Image, after: Image): DispatchHistoryEntry | undefined {
  if (!before || !after || after.entity !== dispatchHistoryEntity || after.status !== "ASSIGNED") return undefined;
  const by = dispatchedBySchema.safeParse(after.dispatchedBy);
  if (!by.success) return undefined;
  const version = after.version;
  if (typeof version !== "number" || version === before.version) return undefined;
  const previous = dispatchedBySchema.safeParse(before.dispatchedBy);
  const resultId = text(after.routingResultId);
  const sameDispatch =
    previous.success &&
    previous.data.at === by.data.at &&
    previous.data.source === by.data.source &&
    previous.data.userId === by.data.userId &&
    text(before.routingResultId) === resultId;
  if (sameDispatch) return undefined;
  const organizationId = text(after.organizationId);
  const visitId = text(after._id);
  const hubId = text(after.hubId);
  if (!organizationId || !visitId || !hubId) return undefined;
  const from = (visitStatuses as readonly string[]).includes(before.status as string) ? (before.status as VisitStatus) : "UNASSIGNED";
  return {
    organizationId,
    hubId,
    visitId,
    transition: {
      from,
      to: "ASSIGNED",
      at: by.data.at,
      source: by.data.source,
      userId: by.data.userId,
      position: null,
      failureReason: null,
      notes: null,
      proofIds: [],
      version,
      vehicleId: text(after.assignedVehicleId) ?? null,
      routingResultId: resultId ?? null,
    },
  };
}
