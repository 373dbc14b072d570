import { describe, expect, it } from "vitest";
import { buildRunProblem, describeSolution } from "#shared/domain/runs/build-problem";
import { solveRouting } from "#shared/routing/solver";
import { input, profile, vehicle, visit } from "#test/unit/runs/plan-fixtures";

describe("Domain: a reason code for every dropped visit of a run", () => {
  it("a capacity-bound day: the search's drops say capacity and name the weight; pre-solve reasons keep their sentence; the summary counts by code", () => {
    const run = input("2026-03-02T06:00:30Z", {
      configuration: profile({ capacityConstraint: { weight: true, volume: true } }),
      vehicles: [
        vehicle({ _id: "a", tags: [], capacity: { weight: { max: 500 }, volume: { max: 100 } }, constraints: {} }),
        vehicle({ _id: "b", tags: [], capacity: { weight: { max: 500 }, volume: { max: 100 } }, constraints: {} }),
      ],
      visits: [
        ...Array.from({ length: 12 }, (_, i) =>
          visit(`w${i}`, { capacity: { weight: 100, volume: 1 }, coordinate: { lat: -6.2 - 0.005 * i, lng: 106.81 } }),
        ),
        visit("tagged", { tags: ["crane"] }),
      ],
    });
    const planned = buildRunProblem(run);
    const solution = solveRouting(planned.problem, { timeLimitMs: Infinity, maxIterations: 200 });
    const { body, summary } = describeSolution(run, planned, solution);
    const searched = body.dropped.filter((entry) => entry.visitId !== "tagged");
    expect(searched).toHaveLength(2);
    for (const entry of searched) {
      expect(entry).toMatchObject({
        reasonCode: "capacity",
        reasonDetail: "weight",
        reason: "could not be fitted: no route has the weight capacity left",
      });
    }
    expect(body.dropped).toContainEqual(
      expect.objectContaining({
        visitId: "tagged",
        reason: "no vehicle with matching tags",
        reasonCode: "noCompatibleVehicle",
        reasonDetail: null,
      }),
    );
    expect(summary.droppedByReason).toEqual({ capacity: 2, noCompatibleVehicle: 1 });
  });
});
