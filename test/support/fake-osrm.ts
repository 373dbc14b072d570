import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { haversineMetres } from "#shared/routing/matrix";
import type { Location } from "#shared/routing/model";
import { encodePolyline } from "#shared/domain/travel/road-geometry";

/**
 * A local server speaking OSRM's table protocol (`GET /table/v1/{profile}/{lng,lat;…}?sources=…
 * &destinations=…&annotations=duration,distance`, http://project-osrm.org/docs/v5.24.0/api/#table-service):
 * `{ code: "Ok", durations, distances }` with rows = sources and columns = destinations, null where no
 * route; `400 { code: "TooBig" }` when sources × destinations exceed `maxTableSize`² (OSRM's
 * `--max-table-size` rule), `400 { code: "InvalidQuery" }` for a malformed request. Its network is
 * deliberately asymmetric (`asymmetricLeg`). Failures can be injected per request number.
 *
 * It also speaks OSRM's route protocol (`GET /route/v1/{profile}/{lng,lat;…}?overview=full&geometries=polyline`,
 * http://project-osrm.org/docs/v5.24.0/api/#route-service): `{ code: "Ok", routes: [{ geometry, legs, distance,
 * duration }], waypoints }`, each leg's road an L (`roadLeg`: along the latitude, then the longitude), so a road
 * line is told from a straight one; `routeFault` injects failures per route request.
 */
export interface FakeOsrmOptions {
  maxTableSize?: number;
  /** The travel between two points; default `asymmetricLeg`. */
  leg?: (from: Location, to: Location) => { seconds: number; metres: number } | null;
  /** Answer request number n (1-based) like this instead: an HTTP status with an OSRM error code, a partial answer, or a hang. */
  fault?: (request: number) => { status: number; code: string } | "partial" | "hang" | "garbage" | undefined;
  /** Answer route request number n (1-based) like this instead. */
  routeFault?: (request: number) => { status: number; code: string } | "hang" | "garbage" | undefined;
}

export interface FakeOsrm {
  url: string;
  /** Table requests answered or refused so far. */
  requests: number;
  /** Route requests answered or refused so far. */
  routeRequests: number;
  /** Sources × destinations of every answered request. */
  elements: number;
  /** The largest sources and destinations of one request. */
  largest: { sources: number; destinations: number };
  close(): Promise<void>;
}

/**
 * Driving north takes 1.6× as long as driving south, and driving east is 1.4× the distance of driving
 * west (one-way streets): i → j differs from j → i for almost every pair.
 */
export function asymmetricLeg(from: Location, to: Location): { seconds: number; metres: number } {
  const straight = haversineMetres(from, to);
  const metres = Math.round(straight * (to.lng > from.lng ? 1.4 : 1.1) * 10) / 10;
  const seconds = Math.round((metres / (30 / 3.6)) * (to.lat > from.lat ? 1.6 : 1) * 10) / 10;
  return { seconds, metres };
}

/** The fake network's road between two points: along the latitude first, then the longitude (an L). */
export function roadLeg(from: Location, to: Location): Location[] {
  return [from, { lat: from.lat, lng: to.lng }, to];
}

export async function startFakeOsrm(options: FakeOsrmOptions = {}): Promise<FakeOsrm> {
  const maxTableSize = options.maxTableSize ?? 100;
  const leg = options.leg ?? asymmetricLeg;
  const hanging = new Set<() => void>();
  const state = { requests: 0, routeRequests: 0, elements: 0, largest: { sources: 0, destinations: 0 } };
  const server: Server = createServer((request, response) => {
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    const url = new URL(request.url ?? "/", "http://osrm.invalid");
    const route = /^\/route\/v1\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (route) {
      const fault = options.routeFault?.(++state.routeRequests);
      if (fault === "hang") {
        hanging.add(() => response.destroy());
        return;
      }
      if (fault === "garbage") {
        response.writeHead(200, { "content-type": "text/html" });
        return response.end("<html>proxy error</html>");
      }
      if (fault) return answer(fault.status, { code: fault.code, message: `injected ${fault.code}` });
      const waypoints = decodeURIComponent(route[2]!)
        .split(";")
        .map((pair) => pair.split(",").map(Number))
        .map(([lng, lat]) => ({ lng: lng!, lat: lat! }));
      if (waypoints.length < 2 || waypoints.some((point) => !Number.isFinite(point.lat) || !Number.isFinite(point.lng)))
        return answer(400, { code: "InvalidQuery", message: "Query string malformed" });
      if (url.searchParams.get("overview") !== "full" || url.searchParams.get("geometries") !== "polyline")
        return answer(400, { code: "InvalidOptions", message: "overview/geometries" });
      const legs = waypoints.slice(1).map((to, k) => {
        const travel = leg(waypoints[k]!, to) ?? { seconds: 0, metres: 0 };
        return { distance: travel.metres, duration: travel.seconds, steps: [], summary: "" };
      });
      const line = waypoints.slice(1).flatMap((to, k) => roadLeg(waypoints[k]!, to).slice(k === 0 ? 0 : 1));
      return answer(200, {
        code: "Ok",
        routes: [
          {
            geometry: encodePolyline(line),
            legs,
            distance: legs.reduce((sum, l) => sum + l.distance, 0),
            duration: legs.reduce((sum, l) => sum + l.duration, 0),
          },
        ],
        waypoints: waypoints.map((point) => ({ location: [point.lng, point.lat], name: "" })),
      });
    }
    const match = /^\/table\/v1\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (!match) return answer(400, { code: "InvalidUrl", message: "URL string malformed close to position 1" });
    const request_ = ++state.requests;
    const fault = options.fault?.(request_);
    if (fault === "hang") {
      hanging.add(() => response.destroy());
      return;
    }
    if (fault === "garbage") {
      response.writeHead(200, { "content-type": "text/html" });
      return response.end("<html>proxy error</html>");
    }
    if (fault && fault !== "partial") return answer(fault.status, { code: fault.code, message: `injected ${fault.code}` });
    const coordinates = decodeURIComponent(match[2]!)
      .split(";")
      .map((pair) => pair.split(",").map(Number));
    if (coordinates.some((pair) => pair.length !== 2 || pair.some((n) => !Number.isFinite(n))))
      return answer(400, { code: "InvalidQuery", message: "Query string malformed" });
    const indices = (name: string) => (url.searchParams.get(name) ?? "").split(";").filter(Boolean).map(Number);
    const sources = url.searchParams.has("sources") ? indices("sources") : coordinates.map((_, i) => i);
    const destinations = url.searchParams.has("destinations") ? indices("destinations") : coordinates.map((_, i) => i);
    if ([...sources, ...destinations].some((i) => !Number.isInteger(i) || i < 0 || i >= coordinates.length))
      return answer(400, { code: "InvalidOptions", message: "Index out of bounds" });
    if (sources.length * destinations.length > maxTableSize * maxTableSize)
      return answer(400, { code: "TooBig", message: "Too many table coordinates" });
    if (url.searchParams.get("annotations") !== "duration,distance") return answer(400, { code: "InvalidOptions", message: "annotations" });
    state.elements += sources.length * destinations.length;
    state.largest = {
      sources: Math.max(state.largest.sources, sources.length),
      destinations: Math.max(state.largest.destinations, destinations.length),
    };
    const point = (i: number): Location => ({ lng: coordinates[i]![0]!, lat: coordinates[i]![1]! });
    const durations = sources.map((s) => destinations.map((d) => (s === d ? 0 : (leg(point(s), point(d))?.seconds ?? null))));
    const distances = sources.map((s) => destinations.map((d) => (s === d ? 0 : (leg(point(s), point(d))?.metres ?? null))));
    if (fault === "partial") return answer(200, { code: "Ok", durations: durations.slice(1), distances: distances.slice(1) });
    answer(200, { code: "Ok", durations, distances });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    get routeRequests() {
      return state.routeRequests;
    },
    get elements() {
      return state.elements;
    },
    get largest() {
      return state.largest;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const hang of hanging) hang();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
