import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from "#shared/domain/errors";
import { assertTransition, attemptsAfter, holdsVehicle, progressActions } from "#shared/domain/visits/lifecycle";
import {
  MAX_PROOFS_PER_VISIT,
  noProofStorage,
  PROOF_URL_TTL_SECONDS,
  type ProofDownload,
  proofOf,
  type ProofStorage,
  type ProofUpload,
  type ProofUploadRequest,
  unmetRequirements,
  unmetRequirementsError,
  type VisitProof,
} from "#shared/domain/visits/proofs";
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
  type VisitProgress,
  type DispatchedBy,
  type VisitTransition,
  type TransitionSource,
  writableVisitFields,
} from "#shared/domain/visits/schema";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";

export interface VisitPage {
  items: Visit[];
  nextCursor: string | null;
}

/** A status change written with the visit (same transaction): its history item and the vehicle's current-stop item. */
export interface StatusChange {
  transition: VisitTransition;
  /** The vehicle whose current-stop item the visit takes (entering EN_ROUTE/ARRIVED) or frees (leaving them). */
  vehicleHold?: { vehicleId: string; take: boolean };
}

export interface TransitionPage {
  items: VisitTransition[];
  nextCursor: string | null;
}

/**
 * Port: told of each driver action once its write committed (the live route re-projects its ETAs,
 * shared/domain/live/live-routes.ts). It must not throw: the action is recorded whatever it does.
 */
export type ProgressRecorded = (organizationId: string, visit: Visit, action: VisitProgress["action"], at: Date) => Promise<void>;

/** Port: the driver (`assignee`) of a vehicle of the organization; undefined when there is no such vehicle. */
export type VehicleAssignee = (organizationId: string, vehicleId: string) => Promise<string | null | undefined>;

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
  replace(visit: Visit, previous: { version: number; hubId: string; pickupVisitId: string | null }, change?: StatusChange): Promise<void>;
  /** The visit's status changes, oldest first. */
  history(organizationId: string, visitId: string, limit: number, cursor: string | undefined): Promise<TransitionPage>;
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
  markDispatched(
    organizationId: string,
    hubId: string,
    visitId: string,
    dispatch: VisitDispatch,
    updatedTime: string,
    /** Stored on the visit: the stream appends the dispatch to its history from it. */
    dispatchedBy: DispatchedBy,
    pinnedFromResultId?: string,
    releasedFromResultId?: string,
  ): Promise<boolean>;
}

function assertHubAllowed(caller: Caller, hubId: string): void {
  if (!callerMayUseHub(caller, hubId)) throw ValidationError.single("hubId", "hubId must be one of the hubs your token allows");
}

/** Only dispatch assigns a visit; a client may keep ASSIGNED on an assigned visit but not set it. */
function assertStatusChangeAllowed(from: VisitStatus | undefined, to: VisitStatus): void {
  if (from === undefined) {
    if (to === "ASSIGNED") throw ValidationError.single("status", "ASSIGNED is set by dispatching a routing result, not by clients");
    assertTransition("UNASSIGNED", to, "dispatcher");
    return;
  }
  assertTransition(from, to, "dispatcher");
}

/** A driver's `at` must be recent: within the last 24 hours and at most 60 seconds ahead of the server's clock. */
const PROGRESS_PAST_MS = 24 * 60 * 60 * 1000;
const PROGRESS_AHEAD_MS = 60 * 1000;

/** The status change from `before` to `to`, with the visit fields it sets (attempts, failureReason, lastTransition). */
export function changeOf(
  before: Visit,
  version: number,
  to: VisitStatus,
  how: {
    source: TransitionSource;
    userId: string;
    at: Date;
    position?: VisitTransition["position"];
    failureReason?: Visit["failureReason"];
    notes?: string | null;
    proofIds?: readonly string[];
  },
): { fields: Pick<Visit, "status" | "attempts" | "failureReason" | "lastTransition">; change: StatusChange } {
  const transition: VisitTransition = {
    from: before.status,
    to,
    at: how.at.toISOString(),
    source: how.source,
    userId: how.userId,
    position: how.position ?? null,
    failureReason: to === "FAILED" ? (how.failureReason ?? null) : null,
    notes: how.notes ?? null,
    proofIds: [...(how.proofIds ?? [])],
    version: version + 1,
    vehicleId: null,
    routingResultId: null,
  };
  const vehicleId = before.assignedVehicleId;
  const holdBefore = holdsVehicle(before.status);
  const holdAfter = holdsVehicle(to);
  const change: StatusChange = {
    transition,
    ...(vehicleId !== null && holdBefore !== holdAfter ? { vehicleHold: { vehicleId, take: holdAfter } } : {}),
  };
  return {
    fields: {
      status: to,
      attempts: attemptsAfter(before.status, to, before.attempts),
      failureReason: transition.failureReason,
      lastTransition: transition,
    },
    change,
  };
}

function writableFieldsOf(input: VisitInput): Omit<Visit, "_id" | "organizationId" | "createdTime" | "updatedTime" | keyof VisitDispatch> {
  return Object.fromEntries(writableVisitFields.map((field) => [field, input[field]])) as ReturnType<typeof writableFieldsOf>;
}

export function createVisitService(
  store: VisitStore,
  now: () => Date = () => new Date(),
  vehicleAssignee: VehicleAssignee = async () => undefined,
  progressRecorded: ProgressRecorded = async () => {},
  proofStorage: ProofStorage = noProofStorage,
) {
  async function findVisible(caller: Caller, visitId: string) {
    const found = await store.find(caller.organizationId, visitId);
    if (!found || !callerMayUseHub(caller, found.visit.hubId)) throw new NotFoundError();
    return found;
  }

  /** The driver rule of progress and proofs: the assignee of the visit's vehicle, or a holder of `edit/visit`; anyone else 403 visit-403. */
  async function assertMayReport(caller: Caller, visit: Visit): Promise<void> {
    if (caller.permissions.has("edit/visit")) return;
    const assignee = visit.assignedVehicleId === null ? undefined : await vehicleAssignee(caller.organizationId, visit.assignedVehicleId);
    if (assignee == null || assignee !== caller.userId)
      throw new ForbiddenError(
        "Only the driver assigned to this visit's vehicle (or a holder of edit/visit) may report its progress.",
        "visit-403",
      );
  }

  /**
   * The proofs an action names that the visit does not hold yet, each described by its object
   * (HeadObject on the key derived from the organization, the visit and the id): one 400 on
   * `proofIds` listing every id not uploaded, or not uploaded as answered.
   */
  async function newProofs(caller: Caller, visit: Visit, proofIds: readonly string[], recordedAt: string): Promise<VisitProof[]> {
    const unseen = proofIds.filter((id) => !visit.proofs.some((proof) => proof.proofId === id));
    const described = await Promise.all(
      unseen.map(async (proofId) => {
        const stored = await proofStorage.describe(caller.organizationId, visit._id, proofId);
        return stored
          ? proofOf(proofId, stored, recordedAt)
          : `proof ${proofId} was not uploaded for this visit (POST /visit/{visitId}/proofs, then the form)`;
      }),
    );
    const problems = described.filter((each): each is string => typeof each === "string");
    if (problems.length > 0) throw new ValidationError(problems.map((message) => ({ field: "proofIds", message })));
    const proofs = described as VisitProof[];
    if (visit.proofs.length + proofs.length > MAX_PROOFS_PER_VISIT)
      throw ValidationError.single("proofIds", `a visit keeps at most ${MAX_PROOFS_PER_VISIT} proofs; it has ${visit.proofs.length}`);
    return proofs;
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

  async function presignProofUpload(
    organizationId: string,
    upload: Pick<ProofUpload, "proofId" | "visitId" | "kind" | "contentType" | "maxBytes">,
  ): Promise<ProofUpload> {
    const target = await proofStorage.uploadTarget(organizationId, upload.visitId, upload.proofId, upload);
    return { ...upload, method: "POST", ...target };
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
        attempts: 0,
        failureReason: null,
        lastTransition: null,
        proofs: [],
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
      const time = now();
      const moved =
        merged.status !== existing.visit.status
          ? changeOf(existing.visit, existing.version, merged.status, { source: "dispatcher", userId: caller.userId, at: time })
          : undefined;
      const visit: Visit = {
        ...existing.visit,
        ...writableFieldsOf(merged),
        ...(backToPool ? noDispatch : {}),
        ...moved?.fields,
        updatedTime: formatDateTimeUtc(time),
      };
      const previous = { version: existing.version, hubId: existing.visit.hubId, pickupVisitId: existing.visit.pickupVisitId };
      await writeUnder(versions, () => store.replace(visit, previous, moved?.change), existing.version + 1);
      return visit;
    },

    /**
     * A driver's action (POST /visit/{id}/progress): the caller must be the assignee of the visit's
     * vehicle, or hold `edit/visit` (a dispatcher acting for the driver); the move must be in the
     * lifecycle table. Written conditionally on the version read and the status it moves from, so of
     * concurrent identical actions exactly one changes the visit; the others find the new status (409).
     */
    async progress(caller: Caller, visitId: string, input: VisitProgress, versions?: VersionCondition): Promise<Visit> {
      const existing = await findVisible(caller, visitId);
      versions?.check(existing.version);
      const before = existing.visit;
      await assertMayReport(caller, before);
      const time = now();
      const at = input.at !== undefined ? new Date(input.at) : time;
      if (at.getTime() < time.getTime() - PROGRESS_PAST_MS || at.getTime() > time.getTime() + PROGRESS_AHEAD_MS)
        throw ValidationError.single("at", "at must be within the last 24 hours and at most 60 seconds ahead of the server's time");
      const to = progressActions[input.action];
      assertTransition(before.status, to, "driver");
      const proofIds = [...new Set(input.proofIds ?? [])];
      const proofs = [...before.proofs, ...(await newProofs(caller, before, proofIds, at.toISOString()))];
      if (to === "DONE") {
        const unmet = unmetRequirements(before.requirements, { proofs, notes: input.notes });
        if (unmet.length > 0) throw unmetRequirementsError(unmet);
      }
      const moved = changeOf(before, existing.version, to, {
        source: "driver",
        userId: caller.userId,
        at,
        ...(input.position ? { position: input.position } : {}),
        failureReason: input.failureReason ?? null,
        notes: input.notes ?? null,
        proofIds,
      });
      const visit: Visit = { ...before, ...moved.fields, proofs, updatedTime: formatDateTimeUtc(time) };
      const previous = { version: existing.version, hubId: before.hubId, pickupVisitId: before.pickupVisitId };
      try {
        await writeUnder(versions, () => store.replace(visit, previous, moved.change), existing.version + 1);
      } catch (error) {
        // Lost the race to another change: answer what the visit is now (a second `complete` finds it DONE: 409 visit-409).
        if (error instanceof ConflictError && error.failedCode === "sys-410") {
          const now = await store.find(caller.organizationId, visitId);
          if (now) assertTransition(now.visit.status, to, "driver");
        }
        throw error;
      }
      await progressRecorded(caller.organizationId, visit, input.action, at);
      return visit;
    },

    /**
     * Geofence arrival (the vehicle's positions stopped at its next stop, shared/domain/live): the driver's
     * `arrive` on the same path — the lifecycle table, one conditional write of the visit with its history
     * entry and the vehicle's current-stop item, then the live route's re-projection — with source
     * `geofence` and the reporting user. Only while the visit is still ASSIGNED or EN_ROUTE on `vehicleId`;
     * a visit that moved meanwhile (arrived already, finished, re-assigned, another change won the write)
     * is left alone: undefined, nothing written.
     */
    async arriveByGeofence(
      organizationId: string,
      visitId: string,
      vehicleId: string,
      how: { at: Date; position: VisitTransition["position"]; userId: string },
    ): Promise<Visit | undefined> {
      const existing = await store.find(organizationId, visitId);
      if (!existing) return undefined;
      const before = existing.visit;
      if (before.assignedVehicleId !== vehicleId || (before.status !== "ASSIGNED" && before.status !== "EN_ROUTE")) return undefined;
      assertTransition(before.status, progressActions.arrive, "driver");
      const moved = changeOf(before, existing.version, progressActions.arrive, {
        source: "geofence",
        userId: how.userId,
        at: how.at,
        position: how.position,
      });
      const visit: Visit = { ...before, ...moved.fields, updatedTime: formatDateTimeUtc(now()) };
      const previous = { version: existing.version, hubId: before.hubId, pickupVisitId: before.pickupVisitId };
      try {
        await store.replace(visit, previous, moved.change);
      } catch (error) {
        // Another change came first (the driver's own arrive, a concurrent report's geofence): it stands.
        if (error instanceof ConflictError) return undefined;
        throw error;
      }
      await progressRecorded(organizationId, visit, "arrive", how.at);
      return visit;
    },

    /**
     * A presigned POST for one proof of the visit (POST /visit/{id}/proofs), under the driver rule of
     * progress. Nothing is recorded: the proof counts once a progress action names it.
     */
    async proofUpload(caller: Caller, visitId: string, input: ProofUploadRequest): Promise<ProofUpload> {
      const { visit } = await findVisible(caller, visitId);
      await assertMayReport(caller, visit);
      return presignProofUpload(caller.organizationId, {
        proofId: newId(now()),
        visitId: visit._id,
        kind: input.kind,
        contentType: input.contentType,
        maxBytes: input.sizeBytes,
      });
    },

    /** The same upload form signed again (an Idempotency-Key replay stores the answer without its signature). */
    presignProofUpload,

    /**
     * Download URLs of the proofs recorded on the visit (GET /visit/{id}/proofs): what the driver's
     * actions named and the requirements were checked against, at most MAX_PROOFS_PER_VISIT, signed
     * locally (no S3 call).
     */
    async proofs(caller: Caller, visitId: string): Promise<ProofDownload[]> {
      const { visit } = await findVisible(caller, visitId);
      return Promise.all(
        visit.proofs.map(async (proof) => ({
          ...proof,
          url: await proofStorage.downloadUrl(caller.organizationId, visit._id, proof.proofId, PROOF_URL_TTL_SECONDS),
          expiresInSeconds: PROOF_URL_TTL_SECONDS,
        })),
      );
    },

    async history(caller: Caller, visitId: string, query: { limit: number; cursor?: string | undefined }): Promise<TransitionPage> {
      await findVisible(caller, visitId);
      return store.history(caller.organizationId, visitId, query.limit, query.cursor);
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
