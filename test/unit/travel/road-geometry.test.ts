import { describe, expect, it } from "vitest";
import {
  decodePolyline,
  encodePolyline,
  fetchRoadGeometry,
  type RouteGeometrySource,
  simplifyLine,
  splitAtWaypoints,
} from "#shared/domain/travel/road-geometry";
import { TravelSourceError } from "#shared/domain/travel/road-matrix";
import type { Location } from "#shared/routing/model";

const at = (lat: number, lng: number): Location => ({ lat, lng });

/** An engine whose road between two waypoints is an L (along the latitude, then the longitude), recording its requests. */
function lSource(overrides: Partial<RouteGeometrySource> = {}, fail?: (request: number) => Error | undefined) {
  const asked: Location[][] = [];
  const source: RouteGeometrySource = {
    kind: "osrm",
    maxWaypoints: 3,
    concurrency: 1,
    timeoutMs: 1000,
    retries: 0,
    async route(waypoints) {
      asked.push([...waypoints]);
      const failure = fail?.(asked.length);
      if (failure) throw failure;
      return waypoints.slice(1).map((to, k) => [waypoints[k]!, at(waypoints[k]!.lat, to.lng), to]);
    },
    ...overrides,
  };
  return { source, asked };
}

describe("Road geometry: encoded polylines", () => {
  it("encodes and decodes Google's documented example (precision 5)", () => {
    const points = [at(38.5, -120.2), at(40.7, -120.95), at(43.252, -126.453)];
    expect(encodePolyline(points)).toBe("_p~iF~ps|U_ulLnnqC_mqNvxq`@");
    expect(decodePolyline("_p~iF~ps|U_ulLnnqC_mqNvxq`@")).toEqual(points);
  });

  it("refuses a truncated or foreign string instead of drawing nonsense", () => {
    expect(() => decodePolyline("_p~iF~ps|U_")).toThrow();
    expect(() => decodePolyline("   ")).toThrow();
  });
});

describe("Road geometry: simplification and legs", () => {
  it("drops points within the tolerance and keeps corners beyond it", () => {
    // A straight street with a 0.5 m wobble, then a corner.
    const line = [at(0, 0), at(0.000004, 0.0005), at(0, 0.001), at(0.001, 0.001)];
    expect(simplifyLine(line, 5)).toEqual([at(0, 0), at(0, 0.001), at(0.001, 0.001)]);
  });

  it("cuts a line at its waypoints, a later pass by a waypoint staying in a later leg", () => {
    const a = at(0, 0);
    const b = at(0, 0.001);
    const c = at(0.001, 0.001);
    // a → b → c → back past b → a.
    const line = [a, b, c, b, a];
    expect(splitAtWaypoints(line, [a, b, c, a])).toEqual([
      [a, b],
      [b, c],
      [c, b, a],
    ]);
  });
});

describe("Road geometry: asking the engine within a budget and a cap", () => {
  const routes = [
    { vehicleId: "v1", waypoints: [at(0, 0), at(0.01, 0.01), at(0.02, 0), at(0.01, -0.01), at(0, 0)] },
    { vehicleId: "v2", waypoints: [at(0, 0), at(-0.01, 0.01), at(0, 0)] },
  ];

  it("asks in requests of at most maxWaypoints sharing their boundary, reserves every leg first and settles what was answered", async () => {
    const { source, asked } = lSource();
    const budget: string[] = [];
    const outcome = await fetchRoadGeometry({
      routes,
      source,
      deadline: Number.MAX_SAFE_INTEGER,
      elementsBudget: {
        reserve: async (elements) => {
          budget.push(`reserve ${elements}`);
          return undefined;
        },
        settle: async (reserved, answered) => {
          budget.push(`settle ${reserved} ${answered}`);
        },
      },
    });
    // v1: 4 legs in two requests of 3 waypoints (0–2, 2–4); v2: 2 legs in one.
    expect(asked.map((request) => request.length)).toEqual([3, 3, 3]);
    expect(asked[1]![0]).toEqual(routes[0]!.waypoints[2]);
    expect(budget).toEqual(["reserve 6", "settle 6 6"]);
    expect(outcome).toMatchObject({ requests: 3, elementsRequested: 6 });
    expect(outcome.failure).toBeUndefined();
    const legs = outcome.legsByVehicle.get("v1")!.map((leg) => decodePolyline(leg));
    expect(legs).toHaveLength(4);
    legs.forEach((leg, k) => {
      const [from, to] = [routes[0]!.waypoints[k]!, routes[0]!.waypoints[k + 1]!];
      expect(leg).toEqual([from, at(from.lat, to.lng), to]);
    });
  });

  it("asks nothing when the plan's cap refuses the legs, and says so", async () => {
    const { source, asked } = lSource();
    const outcome = await fetchRoadGeometry({
      routes,
      source,
      deadline: Number.MAX_SAFE_INTEGER,
      elementsBudget: { reserve: async () => "the plan's travel elements are used up", settle: async () => undefined },
    });
    expect(asked).toHaveLength(0);
    expect(outcome.failure).toBe("Road geometry was skipped: the plan's travel elements are used up");
    expect(outcome.legsByVehicle.size).toBe(0);
  });

  it("asks nothing once the deadline has passed", async () => {
    const { source, asked } = lSource();
    const outcome = await fetchRoadGeometry({ routes, source, deadline: 100, clock: () => 100 });
    expect(asked).toHaveLength(0);
    expect(outcome.failure).toBe("Road geometry was skipped: no time was left in the run's budget.");
  });

  it("a refused request: the routes answered keep their roads, the others are drawn straight; the tenant's words carry no provider detail", async () => {
    const { source } = lSource({}, (request) =>
      request === 1 ? new TravelSourceError("NoRoute: http://10.0.0.5:5000 said no (HTTP 400)", false, "refused") : undefined,
    );
    const settled: number[] = [];
    const outcome = await fetchRoadGeometry({
      routes: [...routes].reverse(),
      source,
      deadline: Number.MAX_SAFE_INTEGER,
      elementsBudget: { reserve: async () => undefined, settle: async (_, answered) => void settled.push(answered) },
    });
    // v2's only request failed; with one request at a time nothing more is asked after a failure.
    expect([...outcome.legsByVehicle.keys()]).toEqual([]);
    expect(outcome.failure).toBe("The osrm route service refused a request. 2 of 2 routes are drawn straight.");
    expect(outcome.detail).toContain("10.0.0.5");
    expect(settled).toEqual([0]);
  });

  it("keeps the total number of points within maxPoints by simplifying harder", async () => {
    // A wiggly road: 200 points zig-zagging 20 m either side of the straight line.
    const wiggly: RouteGeometrySource = {
      ...lSource().source,
      maxWaypoints: 100,
      async route(waypoints) {
        return waypoints.slice(1).map((to, k) => {
          const from = waypoints[k]!;
          return Array.from({ length: 200 }, (_, i) => {
            const t = i / 199;
            const offset = i === 0 || i === 199 ? 0 : (i % 2 ? 1 : -1) * 0.0002;
            return at(from.lat + t * (to.lat - from.lat) + offset, from.lng + t * (to.lng - from.lng));
          });
        });
      },
    };
    const outcome = await fetchRoadGeometry({ routes, source: wiggly, deadline: Number.MAX_SAFE_INTEGER, maxPoints: 100 });
    const points = [...outcome.legsByVehicle.values()].flat().reduce((sum, leg) => sum + decodePolyline(leg).length, 0);
    expect(points).toBeLessThanOrEqual(100);
    expect(outcome.legsByVehicle.size).toBe(2);
  });
});
