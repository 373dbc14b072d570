// npm run bench:explain -- [--visits 1500] [--vehicles 20] [--seconds 5] [--seed 7] [--cap-ms 1000]
// The reasonCode explainer (shared/routing/explain.ts) on a day with many drops: the realistic day of
// bench/routing/realistic.ts with fewer vehicles than it needs, solved for --seconds, then explained three ways:
// uncapped (with each vehicle's break tried at every place: the full evaluation), hurried (breaks kept where the
// plan has them, the run worker's path past its budget's end + 0.5 s), and as the run worker does when its search used
// the whole budget (hurried after 0.5 s, stopped at the hard cap, --cap-ms). Prints each one's time and how many drops it explained. Run it under `nice -n 10`, alone.
import { parseArgs } from "node:util";
import { explainDropped } from "#shared/routing/explain";
import { solveRouting } from "#shared/routing/solver";
import { realisticProblem } from "./routing/realistic.ts";

const { values } = parseArgs({
  options: {
    visits: { type: "string", default: "1500" },
    vehicles: { type: "string", default: "20" },
    seconds: { type: "string", default: "5" },
    seed: { type: "string", default: "7" },
    "cap-ms": { type: "string", default: "1000" },
    "skip-full": { type: "boolean", default: false },
  },
});
const visits = Number(values.visits);
const vehicles = Number(values.vehicles);
const capMs = Number(values["cap-ms"]);

const problem = realisticProblem(visits, vehicles, Number(values.seed));
const solveStarted = performance.now();
const solution = solveRouting(problem, { seed: Number(values.seed), timeLimitMs: Number(values.seconds) * 1000 });
const searchDropped = solution.dropped.filter((entry) => entry.reason === "could not be fitted").length;
console.log(
  `day: ${visits} visits × ${vehicles} vehicles, solved in ${((performance.now() - solveStarted) / 1000).toFixed(1)} s: ` +
    `${solution.totals.visits} served, ${solution.dropped.length} dropped (${searchDropped} by the search, explained below)`,
);

function measure(label: string, options: Parameters<typeof explainDropped>[2]): void {
  const started = performance.now();
  const explained = explainDropped(problem, solution, options);
  const ms = performance.now() - started;
  const codes = new Map<string, number>();
  for (const entry of solution.dropped) {
    const code = explained.get(entry.visitId)?.reasonCode ?? "none";
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  const unexplained = codes.get("unexplained") ?? 0;
  console.log(
    `${label.padEnd(34)} ${(ms / 1000).toFixed(2).padStart(7)} s  explained ${solution.dropped.length - unexplained}/${solution.dropped.length}` +
      `  ${JSON.stringify(Object.fromEntries(codes))}`,
  );
}

if (!values["skip-full"]) measure("uncapped, every break place", {});
measure("uncapped, hurried (breaks kept)", { hurry: () => true });
// As the run worker when the search used its whole budget: hurried from 500 ms on, stopped at the cap.
const capStarted = Date.now();
measure(`run worker's path, cap ${capMs} ms`, {
  hurry: () => Date.now() > capStarted + 500,
  deadline: capStarted + capMs,
  clock: Date.now,
});
