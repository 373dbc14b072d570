import { describe, expect, it, vi } from "vitest";
import { buildInstance } from "#shared/routing/instance";
import { euclideanTravel } from "#shared/routing/matrix";
import type { RoutingProblem } from "#shared/routing/model";
import { Random } from "#shared/routing/random";
import { RuinRecreate } from "#shared/routing/ruin-recreate";
import { Solution } from "#shared/routing/solution";

/** One vehicle taking at most two visits, and three visits: the third fits only once one of the first two leaves. */
function problem(): RoutingProblem {
  return {
    travel: euclideanTravel(),
    visits: [0, 1, 2].map((i) => ({ id: `v${i}`, location: { lat: 1 + i, lng: 1 }, visitTime: 5 })),
    vehicles: [{ id: "only", start: { lat: 0, lng: 0 }, workingTime: { start: 0, end: 1000 }, maxVisits: 2 }],
  };
}

function fullRoute() {
  const instance = buildInstance(problem());
  const solution = new Solution(instance, { vehicle: 0, underload: 0 });
  solution.insert(0, 0, 1, instance.windowOffset[0]!);
  solution.insert(1, 0, 2, instance.windowOffset[1]!);
  return { instance, solution };
}

describe("route versions", () => {
  it("change with the route's nodes, come back with them on rollback, and are new after a restore", () => {
    const { solution } = fullRoute();
    const before = solution.version[0]!;
    const snapshot = solution.snapshot();

    solution.begin();
    solution.remove(1);
    expect(solution.version[0]).not.toBe(before);
    solution.rollback();
    expect(solution.version[0]).toBe(before);

    solution.begin();
    solution.remove(1);
    solution.commit();
    const committed = solution.version[0]!;
    expect(committed).not.toBe(before);

    solution.restore(snapshot);
    expect(solution.version[0]).not.toBe(before);
    expect(solution.version[0]).not.toBe(committed);
  });
});

describe("recreate's memo of visits that fit nowhere", () => {
  it("does not try a visit again in a route unchanged since it did not fit, and tries it once the route changes", () => {
    const { solution } = fullRoute();
    const route = solution.routes[0]!;
    const tries = vi.spyOn(route, "findInsertion");
    const recreate = new RuinRecreate(solution, new Random(1));

    recreate.recreate([2], false);
    expect(solution.unassigned.has(2)).toBe(true);
    expect(tries).toHaveBeenCalledTimes(1);

    // Same route: not tried again.
    recreate.recreate([2], false);
    expect(tries).toHaveBeenCalledTimes(1);

    // Changed and rolled back: the same nodes again, still not tried.
    solution.begin();
    solution.remove(0);
    solution.rollback();
    recreate.recreate([2], false);
    expect(tries).toHaveBeenCalledTimes(1);
    expect(solution.unassigned.has(2)).toBe(true);

    // A visit leaves for good: there is room now, and the visit goes in.
    solution.remove(0);
    recreate.recreate([2], false);
    expect(tries).toHaveBeenCalledTimes(2);
    expect(solution.unassigned.has(2)).toBe(false);
    expect(solution.routeOf[2]).toBe(0);
  });
});
