import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import { buildInstance } from "#shared/routing/instance";
import { acceptOnPenalisedCost, Penalties, PenalisedStep } from "#shared/routing/penalised";
import { Random } from "#shared/routing/random";
import { RuinRecreate } from "#shared/routing/ruin-recreate";
import { Budget } from "#shared/routing/search";
import { Solution } from "#shared/routing/solution";
import { solveRouting } from "#shared/routing/solver";
import {
  annealRandomPlan,
  expectFeasibleWithEveryVisitOnce,
  randomFeasibleRoutes,
  randomProblem,
  referenceRoute,
} from "./random-problem.ts";

/** The default solver (the step is off) on the same problem: 0 violations. */
function checkSolutionOf(seed: number): string[] {
  const problem = randomProblem(seed, 18);
  return checkSolution(problem, solveRouting(problem, { seed, maxIterations: 200, timeLimitMs: 60_000, earlyStop: false })).violations;
}

describe("the penalised ruin-and-recreate step", () => {
  it("leaves every route feasible (by an independent replay) and every visit routed once or left out, over many steps", () => {
    let infeasible = 0;
    for (let seed = 1; seed <= 8; seed++) {
      // Two interchangeable vehicles with two breaks and a third of another class (random-problem.ts): 2-opt* across
      // classes and breaks is in play. Small penalties make most steps pass through infeasible plans.
      const solution = new Solution(buildInstance(randomProblem(seed, 18)), { vehicle: 1000, underload: 7 });
      const random = new Random(seed);
      randomFeasibleRoutes(solution, random);
      const ruinRecreate = new RuinRecreate(solution, random);
      const step = new PenalisedStep(solution, new Penalties(0.5, 5), random);
      let infeasibleSteps = 0;
      for (let i = 0; i < 40; i++) {
        solution.begin();
        ruinRecreate.ruin();
        if (!step.insertAndImprove(ruinRecreate.order([...solution.unassigned])).feasible) infeasibleSteps++;
        ruinRecreate.recreate([...solution.unassigned], true);
        for (const route of solution.routes) expect(referenceRoute(solution, route, route.nodes).feasible).toBe(true);
        const routed = solution.routes.flatMap((route) => route.nodes.filter((node) => node < solution.instance.visitCount));
        expect(new Set(routed).size).toBe(routed.length);
        expect(routed.length + solution.unassigned.size).toBe(solution.instance.routable.length);
        if (i % 2) solution.commit();
        else solution.rollback();
      }
      infeasible += infeasibleSteps;
    }
    // The point of the penalties: steps do pass through infeasible plans (and are repaired).
    expect(infeasible).toBeGreaterThan(0);
  }, 120_000);

  it("passes through infeasible plans when the penalties are low, and the penalties rise when too few steps end feasible", () => {
    const penalties = new Penalties(1, 1);
    const start = penalties.timeWarp;
    for (let i = 0; i < 100; i++) penalties.register(false);
    expect(penalties.timeWarp).toBeGreaterThan(start);
    const raised = penalties.timeWarp;
    for (let i = 0; i < 100; i++) penalties.register(true);
    expect(penalties.timeWarp).toBeLessThan(raised);
  });

  it("is deterministic for a seed and a number of steps", () => {
    const run = (seed: number) => {
      const solution = new Solution(buildInstance(randomProblem(seed, 18)), { vehicle: 1000, underload: 7 });
      const random = new Random(seed);
      randomFeasibleRoutes(solution, random);
      const ruinRecreate = new RuinRecreate(solution, random);
      const step = new PenalisedStep(solution, new Penalties(0.5, 5), random);
      for (let i = 0; i < 30; i++) {
        solution.begin();
        const removed = ruinRecreate.ruin();
        ruinRecreate.recreate([...solution.unassigned], true);
        step.insertAndImprove(ruinRecreate.order([...solution.unassigned]), removed);
        ruinRecreate.recreate([...solution.unassigned], true);
        solution.commit();
      }
      return solution.snapshot();
    };
    expect(run(5)).toEqual(run(5));
    expect(checkSolutionOf(5)).toEqual([]);
  }, 120_000);
});

/**
 * 250 penalised steps on a random 18-visit day (every third committed), under low penalties: most steps pass
 * through infeasible plans, routes over capacity and over vehicle c's distance limit are common (which the bound
 * reads), and the weights move (new epochs) along the way. The states after each step, the step's counts and the
 * penalty epochs: runs that differ only in the memo or the bound must give the same states.
 */
function penalisedSteps(seed: number, options: { remember: boolean; bound?: boolean }) {
  const solution = new Solution(buildInstance(randomProblem(seed, 18)), { vehicle: 1000, underload: 7 });
  const random = new Random(seed);
  randomFeasibleRoutes(solution, random);
  const ruinRecreate = new RuinRecreate(solution, random);
  const penalties = new Penalties(0.5, 5);
  const step = new PenalisedStep(solution, penalties, random, options.remember, options.bound);
  const states: unknown[] = [];
  for (let i = 0; i < 250; i++) {
    solution.begin();
    ruinRecreate.ruin();
    step.insertAndImprove(ruinRecreate.order([...solution.unassigned]));
    ruinRecreate.recreate([...solution.unassigned], true);
    states.push(solution.snapshot(), penalties.timeWarp);
    if (i % 3 === 0) solution.commit();
    else solution.rollback();
  }
  return { states, counts: step.counts, epochs: penalties.epoch };
}

describe("the penalised step's memo of neighbour pairs that did not improve", () => {
  it("skips pairs whose routes and penalties are unchanged, and the steps end exactly as without it", () => {
    let skipped = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const plain = penalisedSteps(seed, { remember: false });
      const remembered = penalisedSteps(seed, { remember: true });
      expect(remembered.states).toEqual(plain.states);
      expect(plain.counts.skipped).toBe(0);
      expect(remembered.epochs).toBeGreaterThan(0);
      expect(remembered.counts.evaluated).toBeLessThan(plain.counts.evaluated);
      skipped += remembered.counts.skipped;
    }
    expect(skipped).toBeGreaterThan(0);
  }, 120_000);

  it("evaluates the pairs of unchanged routes again once the penalties changed", () => {
    const solution = new Solution(buildInstance(randomProblem(3, 18)), { vehicle: 1000, underload: 7 });
    const random = new Random(3);
    randomFeasibleRoutes(solution, random);
    // High penalties: the local search stays feasible and comes to rest.
    const penalties = new Penalties(1000, 1);
    const step = new PenalisedStep(solution, penalties, random);
    const routed = () => [...solution.instance.routable].filter((v) => solution.routeOf[v]! >= 0);
    /** Pairs evaluated by a local search over every routed visit. */
    const evaluated = () => {
      const before = step.counts.evaluated;
      step.insertAndImprove([], routed());
      return step.counts.evaluated - before;
    };
    expect(evaluated()).toBeGreaterThan(0);
    // At rest, the same routes at the same versions: nothing is evaluated again.
    for (let round = 0; round < 10 && evaluated() > 0; round++);
    expect(evaluated()).toBe(0);
    expect(step.counts.skipped).toBeGreaterThan(0);
    const epoch = penalties.epoch;
    for (let i = 0; i < 100; i++) penalties.register(false);
    expect(penalties.epoch).toBe(epoch + 1);
    expect(evaluated()).toBeGreaterThan(0);
  });

  it("a new penalty epoch only when a weight changes", () => {
    const penalties = new Penalties(1, 1);
    // At the floor already: lowering leaves the weights (and the epoch) as they are.
    for (let i = 0; i < 100; i++) penalties.register(true);
    expect(penalties.epoch).toBe(0);
    for (let i = 0; i < 100; i++) penalties.register(false);
    expect(penalties.epoch).toBe(1);
    // Within the target band: no change.
    for (let i = 0; i < 100; i++) penalties.register(i % 5 !== 0);
    expect(penalties.epoch).toBe(1);
  });
});

describe("acceptance on penalised cost (anneal's penalised hooks, acceptOnPenalisedCost)", () => {
  /** An annealing of `iterations` steps from a random feasible plan; counts the accepted steps that stayed infeasible. */
  function annealOnPenalisedCost(seed: number, iterations: number) {
    let infeasible = 0;
    const budget = new Budget(() => 0, Infinity, iterations);
    const planned = annealRandomPlan(seed, budget, ({ solution, ruinRecreate, random }) => {
      // Low penalties: the current plan does leave the feasible space.
      const step = new PenalisedStep(solution, new Penalties(0.5, 5), random);
      const hooks = acceptOnPenalisedCost(solution, ruinRecreate, step, 1.01);
      return {
        recreate: hooks.recreate!,
        penalised: {
          penalty: () => {
            const penalty = hooks.penalised!.penalty();
            if (penalty > 0) infeasible++;
            return penalty;
          },
          repair: hooks.penalised!.repair,
        },
      };
    });
    return { ...planned, infeasible, iterations: budget.iterations };
  }

  it("passes through infeasible plans, and the best it answers is feasible (independent replay) with every visit once", () => {
    let infeasible = 0;
    for (let seed = 1; seed <= 4; seed++) {
      const run = annealOnPenalisedCost(seed, 150);
      const { solution } = run;
      expect(run.iterations).toBe(150);
      infeasible += run.infeasible;
      expectFeasibleWithEveryVisitOnce(solution);
    }
    expect(infeasible).toBeGreaterThan(0);
  }, 120_000);

  it("is deterministic for a seed and an iteration limit", () => {
    const a = annealOnPenalisedCost(7, 120);
    const b = annealOnPenalisedCost(7, 120);
    expect(a.incumbent).toEqual(b.incumbent);
    expect(a.current).toEqual(b.current);
  }, 60_000);

  it("may open an idle vehicle for a visit (insertAll with open), which it never does without", () => {
    const solution = new Solution(buildInstance(randomProblem(2, 10)), { vehicle: 1000, underload: 7 });
    const step = new PenalisedStep(solution, new Penalties(1, 1), new Random(2));
    const visits = [...solution.instance.routable];
    step.insertAll(visits);
    expect(solution.vehiclesUsed).toBe(0);
    expect(solution.unassigned.size).toBe(visits.length);
    step.insertAll(visits, true);
    expect(solution.vehiclesUsed).toBeGreaterThan(0);
    expect(solution.unassigned.size).toBeLessThan(visits.length);
  });
});

describe("the penalised step's bound by the penalties that cannot fall", () => {
  it("prunes insertion and relocate positions, and the steps end exactly as without it", () => {
    let pruned = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const plain = penalisedSteps(seed, { remember: true, bound: false });
      const bounded = penalisedSteps(seed, { remember: true, bound: true });
      expect(bounded.states).toEqual(plain.states);
      expect(plain.counts.pruned).toBe(0);
      pruned += bounded.counts.pruned;
    }
    expect(pruned).toBeGreaterThan(0);
  }, 120_000);
});
