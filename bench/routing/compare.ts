// Paired comparison of this solver against another build of it (`--compare-with DIR`: a copy of
// shared/routing, e.g. `git archive main shared/routing | tar -x -C /tmp/base`): the same problems, the same
// solver seeds, the same CPU budget, the two solvers taking turns run by run so that a busy machine weighs
// on both alike. Prints per problem the cost of each run, each solver's coefficient of variation over its
// streams (run-to-run spread), and over all runs where both served as many visits with fleets of the same
// fixed cost the paired (new − other) cost difference, mean ± standard error, in per cent of the other's.
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { RoutingObjective, RoutingProblem, RoutingSolution, SolveOptions } from "#shared/routing/model";
import { solveRouting } from "#shared/routing/solver";
import { realisticDay } from "./early-stop.ts";
import { compareServed, FEATURES, featureDay, servedByPriority } from "./features.ts";
import { type ReferencePlan, readReferences, referenceFor } from "./references.ts";
import { benchmarkProblems, costOf, solveChecked } from "./run.ts";

export interface CompareOptions {
  /** Folder holding the other build's solver.ts and check.ts. */
  compareWith: string;
  set: "realistic" | "feature" | "solomon";
  /** Realistic and feature days: visits per day, day seeds; Solomon: instance names (default all 56). */
  visits: number;
  seeds: number[];
  only?: string[];
  /** Runs per problem, solver seeds 1, 1001, 2001, … (per realistic day: the day's seed + 1000 × stream). */
  streams: number;
  seconds: number;
  objective: RoutingObjective;
  earlyStop: boolean;
  maxIterations?: number;
  /** Realistic days: a pooled reference file (references.ts) to score every run against. */
  references?: string;
  log: (line: string) => void;
}

type Solve = (problem: RoutingProblem, options: SolveOptions) => RoutingSolution;

interface Run {
  served: number;
  /** Served per priority, 5 … 1 (features.ts): what "served" compares, highest priority first. */
  servedByPriority: number[];
  fleetCost: number;
  cost: number;
  iterations: number;
}

export async function runComparison(options: CompareOptions): Promise<void> {
  const { log } = options;
  const dir = resolve(options.compareWith);
  const other = (await import(pathToFileURL(join(dir, "solver.ts")).href)) as { solveRouting: Solve };
  const problems: { name: string; problem: RoutingProblem; seed: number }[] =
    options.set === "realistic"
      ? options.seeds.map((seed) => ({ name: `day ${seed}`, problem: realisticDay(options.visits, seed), seed }))
      : options.set === "feature"
        ? options.seeds.flatMap((seed) =>
            FEATURES.map((feature) => ({ name: `day ${seed} ${feature}`, problem: featureDay(feature, options.visits, seed), seed })),
          )
        : benchmarkProblems({ set: "solomon", objective: options.objective, only: options.only });
  log(
    `paired comparison, ${options.set}${options.set === "solomon" ? "" : ` ${options.visits} visits`}: this build (new) against ${dir} (other), ` +
      `${options.streams} stream(s) per problem, ${options.seconds} CPU-s${options.earlyStop ? " (early stop on)" : ""}, objective ${options.objective}`,
  );
  const references = options.references ? readReferences(options.references) : undefined;
  const scores = { new: new ReferenceScores(), other: new ReferenceScores() };
  const diffs: number[] = [];
  const cvs = { new: [] as number[], other: [] as number[] };
  let unequal = 0;
  let newBetterFleet = 0;
  let otherBetterFleet = 0;
  const solveWith = (solve: Solve, problem: RoutingProblem, seed: number, label: string): Run => {
    const solution = solveChecked(problem, { ...options, seed }, label, solve);
    return {
      served: solution.totals.visits,
      servedByPriority: servedByPriority(problem, solution),
      fleetCost: solution.totals.fixedCost,
      cost: costOf(solution),
      iterations: solution.iterations,
    };
  };
  // Each build is its own copy of the modules, compiled afresh: warm both up before the first measured run.
  for (const solve of [solveRouting, other.solveRouting])
    solve(problems[0]!.problem, { seed: 1, objective: options.objective, maxIterations: 2000 });
  for (const { name, problem, seed } of problems) {
    const runs = { new: [] as Run[], other: [] as Run[] };
    for (let stream = 0; stream < options.streams; stream++) {
      const solverSeed = seed + 1000 * stream;
      // Taking turns, which goes first alternating, so neither gets the quieter half of the machine.
      const order = stream % 2 === 0 ? (["new", "other"] as const) : (["other", "new"] as const);
      const pair: Partial<Record<"new" | "other", Run>> = {};
      for (const which of order)
        pair[which] = solveWith(which === "new" ? solveRouting : other.solveRouting, problem, solverSeed, `${name} ${which}`);
      const a = pair.new!;
      const b = pair.other!;
      if (references && options.set === "realistic") {
        const reference = referenceFor(references, seed, options.visits, options.objective);
        if (!reference)
          throw new Error(`${options.references} has no ${options.objective} reference for day ${seed} of ${options.visits} visits`);
        scores.new.add(a, reference);
        scores.other.add(b, reference);
      }
      runs.new.push(a);
      runs.other.push(b);
      const served = compareServed(a.servedByPriority, b.servedByPriority);
      const equal = served === 0 && a.fleetCost === b.fleetCost;
      const diff = (a.cost / b.cost - 1) * 100;
      if (equal) diffs.push(diff);
      else {
        unequal++;
        if (served > 0 || (served === 0 && a.fleetCost < b.fleetCost)) newBetterFleet++;
        else otherBetterFleet++;
      }
      log(
        `${name} seed ${solverSeed}: new ${describe(a)} | other ${describe(b)} | ${equal ? `new − other ${signed(diff)} %` : "served or fleet differ"}`,
      );
    }
    if (options.streams > 1) {
      const cvNew = cv(runs.new.map((r) => r.cost));
      const cvOther = cv(runs.other.map((r) => r.cost));
      cvs.new.push(cvNew);
      cvs.other.push(cvOther);
      log(`${name}: CV new ${cvNew.toFixed(2)} %, other ${cvOther.toFixed(2)} %`);
    }
  }
  const { mean, se } = meanAndError(diffs);
  log(
    `paired over ${diffs.length} runs with equal served and fleet cost: new − other ${signed(mean)} ± ${se.toFixed(2)} % (mean ± standard error)` +
      `; served or fleet differ on ${unequal} (better for new ${newBetterFleet}, for other ${otherBetterFleet})`,
  );
  if (references) for (const which of ["new", "other"] as const) log(`against the references (${which}): ${scores[which].summary()}`);
  if (cvs.new.length) {
    log(
      `per-problem CV of cost ≤ 1.0 %: new on ${cvs.new.filter((value) => value <= 1).length} of ${cvs.new.length}, ` +
        `other on ${cvs.other.filter((value) => value <= 1).length} of ${cvs.other.length}`,
    );
    log(
      `per-problem CV of cost (mean, max): new ${average(cvs.new).toFixed(2)} %, ${Math.max(...cvs.new).toFixed(2)} %; other ${average(cvs.other).toFixed(2)} %, ${Math.max(...cvs.other).toFixed(2)} %`,
    );
  }
}

function describe(run: Run): string {
  return `${run.served} served, fixed ${run.fleetCost}, ${run.cost.toFixed(1)}, ${run.iterations} it`;
}

function signed(value: number): string {
  return `${value >= 0 ? "+" : ""}${value.toFixed(2)}`;
}

function average(values: number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length);
}

/** Mean and its standard error (sample standard deviation / √n). */
export function meanAndError(values: number[]): { mean: number; se: number } {
  const mean = average(values);
  if (values.length < 2) return { mean, se: Number.NaN };
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (values.length - 1);
  return { mean, se: Math.sqrt(variance / values.length) };
}

/** Coefficient of variation in per cent (sample standard deviation over the mean). */
export function cv(values: number[]): number {
  const { mean, se } = meanAndError(values);
  return ((se * Math.sqrt(values.length)) / mean) * 100;
}

/**
 * Runs scored against the pooled reference of their day (issue #43's "Done when"): the gap in cost where a run
 * serves the reference's weight with a fleet of its fixed cost (else it missed the reference fleet), median and
 * 90th percentile.
 */
class ReferenceScores {
  private readonly gaps: number[] = [];
  private runs = 0;
  private worse = 0;
  private better = 0;

  add(run: Run, reference: ReferencePlan): void {
    this.runs++;
    const served = compareServed(run.servedByPriority, reference.servedByPriority);
    if (served === 0 && run.fleetCost === reference.fleetCost) this.gaps.push((run.cost / reference.cost - 1) * 100);
    else if (served > 0 || (served === 0 && run.fleetCost < reference.fleetCost)) this.better++;
    else this.worse++;
  }

  summary(): string {
    const sorted = [...this.gaps].sort((x, y) => x - y);
    const at = (share: number) => sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? Number.NaN;
    return (
      `median ${signed(at(0.5))} %, p90 ${signed(at(0.9))} % over ${sorted.length} runs on the reference fleet ` +
      `(${((100 * sorted.length) / Math.max(1, this.runs)).toFixed(0)} % of ${this.runs}); served or fleet worse than the reference on ${this.worse}, ` +
      `better on ${this.better} (then the reference is stale: pool more runs into it)`
    );
  }
}
