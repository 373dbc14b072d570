import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import { NotFoundError, ValidationError } from "#shared/domain/errors";
import { newId } from "#shared/domain/ids";
import { formatDateTimeUtc } from "#shared/domain/time";
import { parseWith } from "#shared/domain/validation";
import {
  noDispatch,
  type Visit,
  type VisitDispatch,
  type VisitInput,
  visitInputSchema,
  type VisitListQuery,
  type VisitPatch,
  type VisitStatus,
  writableVisitFields,
} from "#shared/domain/visits/schema";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";

export interface VisitPage {
  items: Visit[];
  nextCursor: string | null;
}

export interface VisitListFilter {
  hubId?: string | undefined;
  status?: VisitStatus | undefined;
  /** When the caller is restricted to hubs, only visits of these hubs are listed. */
  allowedHubIds: string[];
  limit: number;
  cursor?: string | undefined;
}

/**
 * Persistence port of visits (DynamoDB in shared/store/visit-store.ts). Writes keep the hub's
 * reference count (a visit can only name an existing hub; a hub with visits cannot be deleted)
 * and the sparse active-visits index (only UNASSIGNED/ONGOING visits, by creation time).
 */
export interface VisitStore {
  insert(visit: Visit): Promise<void>;
  find(organizationId: string, visitId: string): Promise<{ visit: Visit; version: number } | undefined>;
  /**
   * Replaces the visit if it still has `previous.version`; a new hubId moves it to that hub's partition.
   * A changed `pickupVisitId` moves the pickup's claim (see `deliveryOf`) in the same transaction.
   */
  replace(visit: Visit, previous: { version: number; hubId: string; pickupVisitId: string | null }): Promise<void>;
  remove(
    organizationId: string,
    visitId: string,
    previous: { version: number; hubId: string; pickupVisitId: string | null },
  ): Promise<boolean>;
  /**
   * The delivery whose pickup is `pickupVisitId`, if any. Each pickup is claimed by one delivery: a
   * write that names a claimed pickup fails with a 400 (the claim is written with the delivery).
   */
  deliveryOf(organizationId: string, pickupVisitId: string): Promise<string | undefined>;
  list(organizationId: string, filter: VisitListFilter): Promise<VisitPage>;
  /** The hub's active visits, oldest first, at most `max` (what a routing run plans). */
  oldestActive(organizationId: string, hubId: string, max: number): Promise<Visit[]>;
  /**
   * Dispatch of one visit: status ASSIGNED plus the dispatch fields, only if the visit is still
   * active (UNASSIGNED/ONGOING) in that hub. False when it is gone or no longer active.
   */
  markDispatched(organizationId: string, hubId: string, visitId: string, dispatch: VisitDispatch, updatedTime: string): Promise<boolean>;
}

function assertHubAllowed(caller: Caller, hubId: string): void {
  if (!callerMayUseHub(caller, hubId)) throw ValidationError.single("hubId", "hubId must be one of the hubs your token allows");
}

/** Only dispatch assigns a visit; a client may keep ASSIGNED on an assigned visit but not set it. */
function assertStatusChangeAllowed(from: VisitStatus | undefined, to: VisitStatus): void {
  if (to === "ASSIGNED" && from !== "ASSIGNED") {
    throw ValidationError.single("status", "ASSIGNED is set by dispatching a routing result, not by clients");
  }
}

function writableFieldsOf(input: VisitInput): Omit<Visit, "_id" | "organizationId" | "createdTime" | "updatedTime" | keyof VisitDispatch> {
  return Object.fromEntries(writableVisitFields.map((field) => [field, input[field]])) as ReturnType<typeof writableFieldsOf>;
}

export function createVisitService(store: VisitStore, now: () => Date = () => new Date()) {
  async function findVisible(caller: Caller, visitId: string) {
    const found = await store.find(caller.organizationId, visitId);
    if (!found || !callerMayUseHub(caller, found.visit.hubId)) throw new NotFoundError();
    return found;
  }

  /**
   * Pickup-and-delivery pairs: a delivery names an existing visit of its own hub as its pickup; a visit
   * is in at most one pair (a pickup is not itself a delivery, nor claimed by another delivery, and a
   * delivery is nobody's pickup); a pickup keeps its delivery's hub. Every mistake is a 400 on the field.
   */
  async function assertPairValid(
    caller: Caller,
    visitId: string,
    visit: { hubId: string; pickupVisitId: string | null },
    before?: Visit,
  ): Promise<void> {
    const fail = (message: string) => ValidationError.single("pickupVisitId", message);
    const claimedBy = before ? await store.deliveryOf(caller.organizationId, visitId) : undefined;
    if (claimedBy !== undefined) {
      if (visit.pickupVisitId !== null) throw fail(`this visit is the pickup of delivery ${claimedBy}: a visit is in at most one pair`);
      if (visit.hubId !== before?.hubId)
        throw ValidationError.single(
          "hubId",
          `this visit is the pickup of delivery ${claimedBy}, which is in hub ${before?.hubId}: both must stay in one hub`,
        );
    }
    if (visit.pickupVisitId === null) return;
    if (visit.pickupVisitId === visitId) throw fail("a visit cannot be its own pickup");
    const pickup = await store.find(caller.organizationId, visit.pickupVisitId);
    if (!pickup || !callerMayUseHub(caller, pickup.visit.hubId)) throw fail("must name an existing visit");
    if (pickup.visit.hubId !== visit.hubId) throw fail("the pickup must be a visit of the same hub");
    if (pickup.visit.pickupVisitId !== null) throw fail("that visit is itself a delivery: a visit is in at most one pair");
    const owner = await store.deliveryOf(caller.organizationId, visit.pickupVisitId);
    if (owner !== undefined && owner !== visitId) throw fail(`that visit is already the pickup of delivery ${owner}`);
  }

  return {
    async create(caller: Caller, input: VisitInput): Promise<Visit> {
      assertHubAllowed(caller, input.hubId);
      assertStatusChangeAllowed(undefined, input.status);
      const time = now();
      const id = newId(time);
      await assertPairValid(caller, id, input);
      const visit: Visit = {
        _id: id,
        ...writableFieldsOf(input),
        ...noDispatch,
        organizationId: caller.organizationId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
      };
      await store.insert(visit);
      return visit;
    },

    async get(caller: Caller, visitId: string, versions?: VersionCondition): Promise<Visit> {
      const found = await findVisible(caller, visitId);
      versions?.check(found.version);
      return found.visit;
    },

    /** Merges the patch over the stored visit and validates the result as a whole visit. */
    async patch(caller: Caller, visitId: string, patch: VisitPatch, versions?: VersionCondition): Promise<Visit> {
      const existing = await findVisible(caller, visitId);
      versions?.check(existing.version);
      const current = Object.fromEntries(writableVisitFields.map((field) => [field, existing.visit[field]]));
      const merged = parseWith(visitInputSchema, { ...current, ...patch });
      assertHubAllowed(caller, merged.hubId);
      assertStatusChangeAllowed(existing.visit.status, merged.status);
      await assertPairValid(caller, visitId, merged, existing.visit);
      // Back in the pool: the old assignment no longer holds.
      const backToPool = merged.status === "UNASSIGNED" && existing.visit.status !== "UNASSIGNED";
      const visit: Visit = {
        ...existing.visit,
        ...writableFieldsOf(merged),
        ...(backToPool ? noDispatch : {}),
        updatedTime: formatDateTimeUtc(now()),
      };
      const previous = { version: existing.version, hubId: existing.visit.hubId, pickupVisitId: existing.visit.pickupVisitId };
      await writeUnder(versions, () => store.replace(visit, previous), existing.version + 1);
      return visit;
    },

    async remove(caller: Caller, visitId: string, versions?: VersionCondition): Promise<void> {
      const existing = await findVisible(caller, visitId);
      versions?.check(existing.version);
      const delivery = await store.deliveryOf(caller.organizationId, visitId);
      if (delivery !== undefined) {
        throw ValidationError.single(
          "visitId",
          `this visit is the pickup of delivery ${delivery}: delete the delivery or clear its pickupVisitId first`,
        );
      }
      const previous = { version: existing.version, hubId: existing.visit.hubId, pickupVisitId: existing.visit.pickupVisitId };
      if (!(await writeUnder(versions, () => store.remove(caller.organizationId, visitId, previous)))) {
        throw new NotFoundError();
      }
    },

    async list(caller: Caller, query: VisitListQuery): Promise<VisitPage> {
      if (query.hubId !== undefined) assertHubAllowed(caller, query.hubId);
      return store.list(caller.organizationId, { ...query, allowedHubIds: caller.hubIds });
    },
  };
}

export type VisitService = ReturnType<typeof createVisitService>;
