// Traces route minimisation alone: when each vehicle count is first reached (diagnostics for tuning).
// npx tsx bench/routing/rm-trace.ts SECONDS SEED R104 R108 …
import { join } from "node:path";
import { constructByRegret } from "#shared/routing/construct";
import { buildInstance } from "#shared/routing/instance";
import { improveLocally } from "#shared/routing/local-search";
import { Random } from "#shared/routing/random";
import { minimiseRoutes, ROUTE_MINIMISATION_PARAMETERS } from "#shared/routing/route-min";
import { Budget, Incumbent } from "#shared/routing/search";
import { Solution } from "#shared/routing/solution";
import { VRPTW_DATA_DIR } from "./run.ts";
import { readBestKnown, readVrptw, toRoutingProblem } from "./vrptw.ts";

const [seconds, seed, ...names] = process.argv.slice(2);
const bks = readBestKnown(join(VRPTW_DATA_DIR, "bks_hierarchical.csv"));
for (const name of names) {
  const problem = toRoutingProblem(readVrptw(join(VRPTW_DATA_DIR, "solomon", `${name}.txt`)));
  const started = performance.now();
  const budget = new Budget(Date.now, Number(seconds) * 1000, Infinity);
  const instance = buildInstance(problem);
  const solution = new Solution(instance, { vehicle: 1e6, underload: 1000 });
  constructByRegret(solution);
  improveLocally(solution);
  const incumbent = new Incumbent(solution);
  const reached: string[] = [`${solution.vehiclesUsed}@0.0`];
  const offer = incumbent.offer.bind(incumbent);
  incumbent.offer = (s: Solution) => {
    const better = offer(s);
    if (better) reached.push(`${s.vehiclesUsed}@${((performance.now() - started) / 1000).toFixed(1)}`);
    return better;
  };
  minimiseRoutes(solution, budget, 1, incumbent, new Random(Number(seed)), {
    ...ROUTE_MINIMISATION_PARAMETERS,
    ...(process.env.KMAX ? { maxEjected: Number(process.env.KMAX) } : {}),
    ...(process.env.IRAND ? { perturbMoves: Number(process.env.IRAND) } : {}),
    ...(process.env.SQN ? { squeezeNeighbours: Number(process.env.SQN) } : {}),
    ...(process.env.SQ ? { squeeze: process.env.SQ === "1" } : {}),
  });
  console.log(`${name.padEnd(6)} bks ${bks.get(name.toLowerCase())!.vehicles}  ${reached.join(" ")}  iterations ${budget.iterations}`);
}
