import { decodePolyline, type RouteGeometrySource, splitAtWaypoints } from "#shared/domain/travel/road-geometry";
import type { TableAnswer, TravelTableSource } from "#shared/domain/travel/road-matrix";
import { TravelSourceError } from "#shared/domain/travel/road-matrix";
import type { Location } from "#shared/routing/model";
import type { TravelProviderDeclaration } from "#shared/domain/travel/providers";

type OsrmDeclaration = Extract<TravelProviderDeclaration, { kind: "osrm" }>;

/**
 * An OSRM-compatible table service (`GET {url}/table/v1/{profile}/{lng,lat;…}?sources=…&destinations=…
 * &annotations=duration,distance`, http://project-osrm.org/docs/v5.24.0/api/#table-service). Each
 * request names the tile's own coordinates only (its sources, then the destinations not among them);
 * `maxTableSize` is the server's `--max-table-size`: OSRM refuses a table whose sources × destinations
 * exceed its square (`TooBig`), so a tile has at most maxTableSize of each.
 */
export function osrmTableSource(declaration: OsrmDeclaration, fetchImpl: typeof fetch = fetch): TravelTableSource {
  const base = declaration.url.replace(/\/+$/, "");
  return {
    kind: "osrm",
    maxSources: declaration.maxTableSize,
    maxDestinations: declaration.maxTableSize,
    concurrency: declaration.concurrency,
    timeoutMs: declaration.timeoutMs,
    retries: declaration.retries,
    async table(
      points: readonly Location[],
      sources: readonly number[],
      destinations: readonly number[],
      signal: AbortSignal,
    ): Promise<TableAnswer> {
      const coordinates: number[] = [...sources];
      const position = new Map(sources.map((point, i) => [point, i]));
      for (const point of destinations) {
        if (!position.has(point)) {
          position.set(point, coordinates.length);
          coordinates.push(point);
        }
      }
      const path = coordinates.map((point) => `${points[point]!.lng},${points[point]!.lat}`).join(";");
      const query = `sources=${sources.map((_, i) => i).join(";")}&destinations=${destinations.map((point) => position.get(point)).join(";")}&annotations=duration,distance`;
      const url = `${base}/table/v1/${declaration.profile}/${path}?${query}`;
      const body = await askOsrm<{ durations?: (number | null)[][]; distances?: (number | null)[][] }>(fetchImpl, base, url, signal, [
        "TimeoutError",
      ]);
      if (!body.durations || !body.distances)
        throw new TravelSourceError("the answer has no durations or no distances (annotations=duration,distance)", true, "badAnswer");
      return { durationsSeconds: body.durations, distancesMetres: body.distances };
    },
  };
}

/** Waypoints of one route request: well below OSRM's default `--max-viaroute-size` (500). */
const ROUTE_WAYPOINTS = 100;

/**
 * An OSRM-compatible route service (`GET {url}/route/v1/{profile}/{lng,lat;…}?overview=full&geometries=polyline`,
 * http://project-osrm.org/docs/v5.24.0/api/#route-service): the road line through the waypoints, cut at the
 * snapped waypoints it answers into one line per leg.
 */
export function osrmRouteSource(declaration: OsrmDeclaration, fetchImpl: typeof fetch = fetch): RouteGeometrySource {
  const base = declaration.url.replace(/\/+$/, "");
  return {
    kind: "osrm",
    maxWaypoints: ROUTE_WAYPOINTS,
    concurrency: declaration.concurrency,
    timeoutMs: declaration.timeoutMs,
    retries: declaration.retries,
    async route(waypoints, signal) {
      const path = waypoints.map((point) => `${point.lng},${point.lat}`).join(";");
      const url = `${base}/route/v1/${declaration.profile}/${path}?overview=full&geometries=polyline`;
      const body = await askOsrm<{ routes?: Array<{ geometry?: unknown }>; waypoints?: Array<{ location?: unknown }> }>(
        fetchImpl,
        base,
        url,
        signal,
        ["TimeoutError", "AbortError"],
      );
      const geometry = body.routes?.[0]?.geometry;
      if (typeof geometry !== "string") throw new TravelSourceError("the answer has no polyline geometry", true, "badAnswer");
      let line: ReturnType<typeof decodePolyline>;
      try {
        line = decodePolyline(geometry);
      } catch (error) {
        throw new TravelSourceError(`the geometry is ${error instanceof Error ? error.message : "unreadable"}`, true, "badAnswer");
      }
      // The snapped waypoints lie on the line; the asked ones may be off the road.
      const snapped = waypoints.map((asked, k) => {
        const location = body.waypoints?.[k]?.location;
        return Array.isArray(location) && location.length === 2 && location.every(Number.isFinite)
          ? { lng: Number(location[0]), lat: Number(location[1]) }
          : asked;
      });
      return splitAtWaypoints(line, snapped);
    },
  };
}

/**
 * One OSRM request (table or route): its answer's body when `code` is `Ok`. A request that never got
 * an answer is `unreachable` (retryable) unless its error is one of `passThrough` (the deadline's own
 * errors, handled by the caller); a 4xx other than 429 is the request's fault (TooBig, InvalidQuery,
 * NoSegment…: asking again cannot help), anything else a retryable bad answer.
 */
async function askOsrm<Body>(
  fetchImpl: typeof fetch,
  base: string,
  url: string,
  signal: AbortSignal | undefined,
  passThrough: readonly string[],
): Promise<Body & { code: "Ok" }> {
  let response: Response;
  try {
    response = await fetchImpl(url, { signal, headers: { accept: "application/json" } });
  } catch (error) {
    if (error instanceof Error && passThrough.includes(error.name)) throw error;
    throw new TravelSourceError(
      `${base} could not be reached: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`,
      true,
      "unreachable",
    );
  }
  const text = await response.text();
  let body: (Body & { code?: string; message?: string }) | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok || body?.code !== "Ok") {
    const what = body?.code ? `${body.code}${body.message ? `: ${body.message}` : ""}` : `HTTP ${response.status}`;
    const retryable = response.status >= 500 || response.status === 429 || (response.ok && body === undefined);
    throw new TravelSourceError(`${what} (HTTP ${response.status})`, retryable, retryable ? "badAnswer" : "refused");
  }
  return body as Body & { code: "Ok" };
}
