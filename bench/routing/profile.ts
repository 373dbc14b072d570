// One realistic day solved for a fixed number of iterations on the CPU clock, for profiling and for
// checking that a speed-up leaves the solution unchanged (same seed and iterations, same cost):
//   node --cpu-prof --import tsx bench/routing/profile.ts [visits=300] [seed=1] [iterations=20000]
// Prints the served visits, vehicles, cost (distance + underload penalty), CPU seconds and violations as JSON.
import { checkSolution } from "#shared/routing/check";
import { realisticDay } from "./early-stop.ts";
import { solveForIterations } from "../support/cpu-clock-solve.ts";
import { costOf } from "./run.ts";

const [visits = 300, seed = 1, iterations = 20_000] = process.argv.slice(2).map(Number);
const problem = realisticDay(visits, seed);
const { solution, cpuSeconds } = solveForIterations(problem, seed, iterations);
console.log(
  JSON.stringify({
    visits,
    seed,
    iterations: solution.iterations,
    served: solution.totals.visits,
    vehicles: solution.totals.vehicles,
    cost: costOf(solution),
    cpuSeconds,
    violations: checkSolution(problem, solution).violations.length,
  }),
);
