// Fleet minimisation (SISR, section 6), used for long routes where route-min.ts's ejection search is too
// slow: empty a route, then run ruin-and-recreate without opening vehicles until every visit is back in,
// accepting a step when fewer visits are left out or when the ones left out have been absent less often
// (absence counters steer the search to hard visits).
import type { Random } from "./random.ts";
import type { RuinRecreate } from "./ruin-recreate.ts";
import { vehicleLowerBound } from "./route-min.ts";
import type { Budget, Incumbent } from "./search.ts";
import type { Solution } from "./solution.ts";

export function minimiseFleet(
  solution: Solution,
  ruinRecreate: RuinRecreate,
  budget: Budget,
  until: number,
  incumbent: Incumbent,
  random: Random,
): void {
  const { instance } = solution;
  const absence = new Float64Array(instance.visitCount);
  const fewestVehicles = vehicleLowerBound(solution);
  const target = incumbent.unassigned;
  let absent = solution.unassigned.size;
  let absenceSum = 0;
  while (budget.progress() < until) {
    if (solution.unassigned.size <= target) {
      incumbent.offer(solution);
      if (solution.vehiclesUsed <= fewestVehicles || !emptyARoute(solution, random)) break;
      absent = solution.unassigned.size;
      absenceSum = sumOver(absence, solution.unassigned);
    }
    solution.begin();
    // Make room next to a visit left out.
    ruinRecreate.ruin(pick(solution.unassigned, random));
    ruinRecreate.recreate([...solution.unassigned], false, random.next() < 0.5 ? absence : undefined);
    budget.iterations++;
    const newAbsenceSum = sumOver(absence, solution.unassigned);
    if (solution.unassigned.size < absent || newAbsenceSum < absenceSum) {
      solution.commit();
      absent = solution.unassigned.size;
      absenceSum = newAbsenceSum;
    } else {
      solution.rollback();
    }
    for (const v of solution.unassigned) absence[v] = absence[v]! + 1;
    absenceSum = sumOver(absence, solution.unassigned);
  }
  if (solution.unassigned.size <= target) incumbent.offer(solution);
  solution.restore(incumbent.snapshot);
}

/**
 * Empties the route whose removal saves the most fixed cost per visit to re-insert. Routes of
 * vehicles with no fixed cost save nothing: false when only such routes are left.
 */
function emptyARoute(solution: Solution, random: Random): boolean {
  const { instance, routes } = solution;
  let chosen = -1;
  let chosenScore = Infinity;
  for (let r = 0; r < routes.length; r++) {
    const route = routes[r]!;
    const fixedCost = instance.fixedCost[route.vehicle]!;
    if (route.visitCount === 0 || fixedCost <= 0) continue;
    const score = (route.visitCount + random.next()) / fixedCost;
    if (score < chosenScore) {
      chosen = r;
      chosenScore = score;
    }
  }
  if (chosen < 0) return false;
  for (const node of routes[chosen]!.nodes.filter((node) => node < instance.visitCount)) solution.remove(node);
  return true;
}

function pick(visits: Set<number>, random: Random): number | undefined {
  let index = random.int(visits.size);
  for (const v of visits) if (index-- === 0) return v;
  return undefined;
}

function sumOver(values: Float64Array, visits: Iterable<number>): number {
  let sum = 0;
  for (const v of visits) sum += values[v]!;
  return sum;
}
