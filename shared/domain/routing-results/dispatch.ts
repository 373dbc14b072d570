import type { DispatchedBy, VisitDispatch, VisitTransition } from "#shared/domain/visits/schema";
import type { DispatchOutcome, RoutingResultBody } from "#shared/domain/routing-results/schema";

/** Port: assigns one visit if it is still active in that hub (a conditional write); false when it is not. */
export type MarkVisitDispatched = (
  organizationId: string,
  hubId: string,
  visitId: string,
  dispatch: VisitDispatch,
  updatedTime: string,
  /** Who dispatches, and when: stored on the visit, from which the stream appends the dispatch to its history. */
  dispatchedBy: DispatchedBy,
  /** A re-plan's pinned visit: assigned only while still ASSIGNED to the same vehicle under this result. */
  pinnedFromResultId?: string,
  /** A re-plan's released visit: assigned (to any vehicle) only while still ASSIGNED under this result. */
  releasedFromResultId?: string,
) => Promise<boolean>;

/**
 * Port: returns a re-plan's released visit that the re-plan dropped to the pool — UNASSIGNED, its dispatch
 * fields cleared, back in the active index — only while it is still ASSIGNED under `fromResultId`, with the
 * change `transition(version)` builds recorded on it and in its history (one transaction); false otherwise.
 */
export type ReturnVisitToPool = (
  organizationId: string,
  hubId: string,
  visitId: string,
  fromResultId: string,
  transition: (version: number) => VisitTransition,
) => Promise<boolean>;

/** Port: the routing result a visit was last dispatched by (null when never, undefined when the visit is gone). */
export type VisitRoutingResultId = (organizationId: string, hubId: string, visitId: string) => Promise<string | null | undefined>;

/**
 * Dispatching a result again (a retried run, or a second POST …/dispatch) must not call its own
 * visits failed: a visit no longer active counts as dispatched when this very result assigned it,
 * as failed otherwise (deleted, completed or cancelled meanwhile, or taken by another result).
 */
export function countingOwnAssignments(
  resultId: string,
  mark: MarkVisitDispatched,
  visitRoutingResultId: VisitRoutingResultId,
): MarkVisitDispatched {
  return async (organizationId, hubId, visitId, dispatch, updatedTime, dispatchedBy, pinnedFromResultId, releasedFromResultId) =>
    (await mark(organizationId, hubId, visitId, dispatch, updatedTime, dispatchedBy, pinnedFromResultId, releasedFromResultId)) ||
    (await visitRoutingResultId(organizationId, hubId, visitId)) === resultId;
}

/** Parallel visit updates per dispatch: 1,500 conditional writes finish in seconds without a burst. */
const DISPATCH_CONCURRENCY = 16;

/**
 * Dispatches routes: every trip's visit gets the vehicle, its order, eta/etd and the result id and
 * becomes ASSIGNED — each update conditional on the visit still being UNASSIGNED/ONGOING (a re-plan's
 * pinned visit: still ASSIGNED to that vehicle under the result the run read), so a visit deleted,
 * started, completed or cancelled since the run is left alone and counted as failed.
 */
export async function dispatchRoutes(
  routes: RoutingResultBody["routes"],
  target: { organizationId: string; hubId: string; resultId: string },
  markVisitDispatched: MarkVisitDispatched,
  updatedTime: string,
  dispatchedBy: DispatchedBy,
): Promise<DispatchOutcome> {
  const work = routes.flatMap((route) =>
    route.trips.map((trip) => ({
      visitId: trip.visitId,
      dispatch: {
        assignedVehicleId: route.vehicleId,
        routingResultId: target.resultId,
        routePlannedOrder: trip.order,
        eta: trip.eta,
        etd: trip.etd,
      } satisfies VisitDispatch,
      pinnedFromResultId: trip.pinnedFromResultId,
      releasedFromResultId: trip.releasedFromResultId,
    })),
  );
  const outcome: DispatchOutcome = { success: 0, failed: 0 };
  let next = 0;
  let stop = false;
  const lane = async () => {
    while (!stop && next < work.length) {
      const item = work[next++] as (typeof work)[number];
      try {
        const assigned = await markVisitDispatched(
          target.organizationId,
          target.hubId,
          item.visitId,
          item.dispatch,
          updatedTime,
          dispatchedBy,
          ...(item.pinnedFromResultId !== undefined || item.releasedFromResultId !== undefined
            ? [item.pinnedFromResultId, item.releasedFromResultId]
            : []),
        );
        if (assigned) outcome.success++;
        else outcome.failed++;
      } catch (error) {
        stop = true; // the other lanes finish the update they are in and take no more
        throw error;
      }
    }
  };
  // Wait for every lane to settle before reporting a failure, so no visit update is still in flight
  // when the caller records the failure (or a retry starts dispatching the same visits).
  const settled = await Promise.allSettled(Array.from({ length: Math.min(DISPATCH_CONCURRENCY, work.length) }, lane));
  const rejected = settled.find((lane): lane is PromiseRejectedResult => lane.status === "rejected");
  if (rejected) throw rejected.reason;
  return outcome;
}

/** The change a re-plan's dispatch makes to a released visit it dropped: back to the pool, by the system. */
export function returnedToPool(at: Date): (version: number) => VisitTransition {
  return (version) => ({
    from: "ASSIGNED",
    to: "UNASSIGNED",
    at: at.toISOString(),
    source: "system",
    userId: "system",
    position: null,
    failureReason: null,
    notes: "dropped by a re-plan",
    proofIds: [],
    version: version + 1,
    vehicleId: null,
    routingResultId: null,
  });
}

/**
 * A re-plan's dispatch returns the released visits it dropped to the pool (each only while still ASSIGNED
 * under the result the run read); answers how many it returned. Sequential: a re-plan drops few.
 */
export async function returnReleasedDrops(
  dropped: RoutingResultBody["dropped"],
  target: { organizationId: string; hubId: string },
  returnVisitToPool: ReturnVisitToPool,
  at: Date,
): Promise<number> {
  let returned = 0;
  for (const entry of dropped) {
    if (entry.releasedFromResultId === undefined) continue;
    if (await returnVisitToPool(target.organizationId, target.hubId, entry.visitId, entry.releasedFromResultId, returnedToPool(at)))
      returned++;
  }
  return returned;
}
