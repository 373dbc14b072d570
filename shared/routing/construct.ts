// Initial solution by regret-2 insertion: repeatedly insert the visit that would lose most by waiting
// (the gap between its cheapest and second-cheapest route), caching each visit's best insertion per
// route and refreshing only the route that changed.
import type { Insertion } from "./route-state.ts";
import type { Solution } from "./solution.ts";

export function constructByRegret(solution: Solution): void {
  const { instance, routes } = solution;
  const m = routes.length;
  // A pair is placed as a whole, with its pickup.
  const pending = instance.hasPairs
    ? [...solution.unassigned].filter((v) => instance.partner[v]! < 0 || instance.isPickup[v])
    : [...solution.unassigned];
  const n = pending.length;
  const cost = new Float64Array(n * m);
  const position = new Int32Array(n * m);
  const window = new Int32Array(n * m);
  const position2 = instance.hasPairs ? new Int32Array(n * m) : window;
  const window2 = instance.hasPairs ? new Int32Array(n * m) : window;
  const insertion: Insertion = { cost: 0, position: 0, window: 0 };

  const evaluate = (i: number, r: number): void => {
    const v = pending[i]!;
    const paired = instance.hasPairs && instance.partner[v]! >= 0;
    const ok =
      instance.compatible[v * instance.vehicleCount + routes[r]!.vehicle] === 1 &&
      (paired
        ? routes[r]!.findPairInsertion(v, Infinity, undefined, insertion)
        : routes[r]!.findInsertion(v, Infinity, undefined, insertion));
    cost[i * m + r] = ok ? insertion.cost : Infinity;
    position[i * m + r] = insertion.position;
    window[i * m + r] = insertion.window;
    if (paired) {
      position2[i * m + r] = insertion.position2!;
      window2[i * m + r] = insertion.window2!;
    }
  };
  for (let i = 0; i < n; i++) for (let r = 0; r < m; r++) evaluate(i, r);

  const open = new Uint8Array(n).fill(1);
  for (let left = n; left > 0; left--) {
    let chosen = -1;
    let chosenRoute = -1;
    let chosenRegret = -Infinity;
    let chosenCost = Infinity;
    let chosenPriority = 0;
    for (let i = 0; i < n; i++) {
      if (!open[i]) continue;
      let best = Infinity;
      let second = Infinity;
      let bestRoute = -1;
      for (let r = 0; r < m; r++) {
        const c = cost[i * m + r]!;
        if (c < best) {
          second = best;
          best = c;
          bestRoute = r;
        } else if (c < second) {
          second = c;
        }
      }
      if (bestRoute < 0) {
        open[i] = 0; // fits nowhere now, and routes only fill up: it stays unassigned
        continue;
      }
      // A visit with a single option has infinite regret; among those, the cheapest goes first.
      const regret = second === Infinity ? Number.MAX_VALUE : second - best;
      // Higher priorities first, then the highest regret.
      const priority = instance.priority[pending[i]!]!;
      if (priority < chosenPriority) continue;
      if (priority > chosenPriority || regret > chosenRegret || (regret === chosenRegret && best < chosenCost)) {
        chosenPriority = priority;
        chosen = i;
        chosenRoute = bestRoute;
        chosenRegret = regret;
        chosenCost = best;
      }
    }
    if (chosen < 0) break;
    open[chosen] = 0;
    const at = chosen * m + chosenRoute;
    if (instance.hasPairs && instance.partner[pending[chosen]!]! >= 0) {
      solution.insertPair(pending[chosen]!, chosenRoute, {
        cost: 0,
        position: position[at]!,
        window: window[at]!,
        position2: position2[at]!,
        window2: window2[at]!,
      });
    } else solution.insert(pending[chosen]!, chosenRoute, position[at]!, window[at]!);
    for (let i = 0; i < n; i++) if (open[i]) evaluate(i, chosenRoute);
  }
}
