import { describe, expect, it } from "vitest";
import { ConflictError, ValidationError } from "#shared/domain/errors";
import { allowedTargets, assertTransition, attemptsAfter, IllegalTransitionError, visitTransitions } from "#shared/domain/visits/lifecycle";
import { visitStatuses } from "#shared/domain/visits/schema";

describe("Visit lifecycle table", () => {
  it("gives the driver exactly the issue's moves", () => {
    const driverMoves = visitStatuses.flatMap((from) => allowedTargets(from, "driver").map((to) => `${from}>${to}`));
    expect(driverMoves.sort()).toEqual(
      [
        "ASSIGNED>EN_ROUTE",
        "EN_ROUTE>ASSIGNED",
        "ASSIGNED>ARRIVED",
        "EN_ROUTE>ARRIVED",
        "ASSIGNED>DONE",
        "EN_ROUTE>DONE",
        "ARRIVED>DONE",
        "ASSIGNED>FAILED",
        "EN_ROUTE>FAILED",
        "ARRIVED>FAILED",
      ].sort(),
    );
  });

  it("lets dispatch assign only active visits, and the dispatcher set its five statuses from anywhere", () => {
    for (const from of visitStatuses) {
      expect(allowedTargets(from, "dispatch")).toEqual(from === "UNASSIGNED" || from === "ONGOING" ? ["ASSIGNED"] : []);
      expect(allowedTargets(from, "dispatcher").sort()).toEqual(
        ["UNASSIGNED", "ONGOING", "DONE", "FAILED", "CANCELLED"].filter((to) => to !== from).sort(),
      );
    }
  });

  it("keeps CANCELLED final for drivers", () => {
    expect(allowedTargets("CANCELLED", "driver")).toEqual([]);
    expect(() => assertTransition("CANCELLED", "DONE", "driver")).toThrow(IllegalTransitionError);
  });

  it("answers an illegal move as a 409 naming from, to and allowed; a dispatcher's flow-only status as a 400", () => {
    try {
      assertTransition("DONE", "DONE", "driver");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConflictError);
      expect((error as IllegalTransitionError).details()).toEqual({ from: "DONE", to: "DONE", allowed: [] });
      expect((error as IllegalTransitionError).failedCode).toBe("visit-409");
    }
    expect(() => assertTransition("ASSIGNED", "ARRIVED", "dispatcher")).toThrow(ValidationError);
    expect(() => assertTransition("ASSIGNED", "ASSIGNED", "dispatcher")).not.toThrow();
  });

  it("counts an attempt only on FAILED → UNASSIGNED", () => {
    for (const from of visitStatuses)
      for (const to of Object.keys(visitTransitions[from]))
        expect(attemptsAfter(from, to as never, 2)).toBe(from === "FAILED" && to === "UNASSIGNED" ? 3 : 2);
  });
});
