import type { RoutingObjective, RoutingProblem, RoutingSolution, SolveOptions } from "#shared/routing/model";
import { solveRouting } from "#shared/routing/solver";
import { cpuMs, solverCpuClock } from "../routing/run.ts";

export type Solve = (problem: RoutingProblem, options: SolveOptions) => RoutingSolution;

/**
 * One solve of a fixed number of iterations on this process's CPU clock (no time limit, no early stop), so a
 * speed-up that should leave the plan unchanged can be checked (same seed and iterations, same cost) and its
 * rate compared while other processes load the machine. `solve` defaults to this build's solver.
 */
export function solveForIterations(
  problem: RoutingProblem,
  seed: number,
  iterations: number,
  solve: Solve = solveRouting,
  objective: RoutingObjective = "hierarchical",
) {
  const started = cpuMs();
  const solution = solve(problem, {
    seed,
    objective,
    timeLimitMs: 1e9,
    maxIterations: iterations,
    earlyStop: false,
    now: solverCpuClock(),
  });
  return { solution, cpuSeconds: (cpuMs() - started) / 1000 };
}
