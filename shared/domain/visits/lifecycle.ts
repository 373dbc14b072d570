import { ConflictError, ValidationError } from "#shared/domain/errors";
import type { VisitStatus } from "#shared/domain/visits/schema";

/**
 * The visit lifecycle: the one table of which flow may move a visit from which status to which
 * (docs/api/execution.md). Pure; the service asks it before every status write, and the answer to an
 * illegal move names the allowed targets from this table, so no second list exists.
 *
 * - `dispatch`: a routing result's dispatch assigns active visits (and re-sequences a re-plan's
 *   pinned ones, which stay ASSIGNED);
 * - `driver`: POST /visit/{id}/progress (start, undo, arrive, complete, fail);
 * - `dispatcher`: PATCH /visit/{id} with a status (as before: any status to the five it may set;
 *   ASSIGNED, EN_ROUTE and ARRIVED only through their flows).
 */
export type VisitFlow = "dispatch" | "driver" | "dispatcher";

const dispatcherTargets: readonly VisitStatus[] = ["UNASSIGNED", "ONGOING", "DONE", "FAILED", "CANCELLED"];
const everyStatus: readonly VisitStatus[] = ["UNASSIGNED", "ONGOING", "ASSIGNED", "EN_ROUTE", "ARRIVED", "DONE", "FAILED", "CANCELLED"];

/** from → to → the flows that may make that move. A move that is not here is illegal for every flow. */
export const visitTransitions: Readonly<Record<VisitStatus, Partial<Record<VisitStatus, readonly VisitFlow[]>>>> = Object.fromEntries(
  everyStatus.map((from) => {
    const row: Partial<Record<VisitStatus, VisitFlow[]>> = {};
    const allow = (to: VisitStatus, flow: VisitFlow) => {
      if (to === from) return;
      const flows = row[to] ?? [];
      flows.push(flow);
      row[to] = flows;
    };
    for (const to of dispatcherTargets) allow(to, "dispatcher");
    if (from === "UNASSIGNED" || from === "ONGOING") allow("ASSIGNED", "dispatch");
    if (from === "ASSIGNED") allow("EN_ROUTE", "driver");
    if (from === "EN_ROUTE") allow("ASSIGNED", "driver");
    if (from === "ASSIGNED" || from === "EN_ROUTE") allow("ARRIVED", "driver");
    if (from === "ASSIGNED" || from === "EN_ROUTE" || from === "ARRIVED") {
      allow("DONE", "driver");
      allow("FAILED", "driver");
    }
    return [from, row];
  }),
) as never;

/** Where `flow` may take a visit in status `from`. */
export function allowedTargets(from: VisitStatus, flow: VisitFlow): VisitStatus[] {
  return Object.entries(visitTransitions[from])
    .filter(([, flows]) => flows?.includes(flow))
    .map(([to]) => to as VisitStatus);
}

/** A visit's move that the lifecycle does not allow: 409 `visit-409` naming from, to and the allowed targets. */
export class IllegalTransitionError extends ConflictError {
  constructor(
    readonly from: VisitStatus,
    readonly to: VisitStatus,
    readonly allowed: VisitStatus[],
  ) {
    super(
      `A visit in status ${from} cannot become ${to}${allowed.length ? `; allowed: ${allowed.join(", ")}` : "; no move is allowed"}.`,
      "visit-409",
    );
  }
  override details(): Record<string, unknown> {
    return { from: this.from, to: this.to, allowed: this.allowed };
  }
}

/** Statuses only their own flow sets: a dispatcher PATCH naming one of them (other than the current status) is a 400, as ASSIGNED always was. */
export const flowOnlyStatuses: readonly VisitStatus[] = ["ASSIGNED", "EN_ROUTE", "ARRIVED"];

/**
 * Checks a move by `flow`; for a dispatcher the same status is no move (a PATCH sending the status back is
 * fine), for a driver it is an action that does nothing, so illegal (a second `complete` is a 409).
 * A dispatcher asking for a flow-only status is a 400 (its field is wrong), any other illegal move a 409.
 */
export function assertTransition(from: VisitStatus, to: VisitStatus, flow: VisitFlow): void {
  if (from === to && flow === "dispatcher") return;
  if (flow === "dispatcher" && flowOnlyStatuses.includes(to)) {
    throw ValidationError.single(
      "status",
      `${to} is set by ${to === "ASSIGNED" ? "dispatching a routing result" : "the driver's progress"}, not by PATCH`,
    );
  }
  if (!visitTransitions[from][to]?.includes(flow)) throw new IllegalTransitionError(from, to, allowedTargets(from, flow));
}

/** Driver actions of POST /visit/{id}/progress and the status each one reaches. */
export const progressActions = {
  start: "EN_ROUTE",
  undo: "ASSIGNED",
  arrive: "ARRIVED",
  complete: "DONE",
  fail: "FAILED",
} as const satisfies Record<string, VisitStatus>;
export type ProgressAction = keyof typeof progressActions;

/** Statuses in which a visit holds its vehicle (at most one per vehicle: the vehicle's current-stop item). */
export const holdsVehicle = (status: VisitStatus) => status === "EN_ROUTE" || status === "ARRIVED";

/** `attempts` after a move: a failed visit put back in the pool is one more attempt. */
export const attemptsAfter = (from: VisitStatus, to: VisitStatus, attempts: number) =>
  from === "FAILED" && to === "UNASSIGNED" ? attempts + 1 : attempts;
