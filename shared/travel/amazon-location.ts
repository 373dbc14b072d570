import {
  CalculateRouteMatrixCommand,
  type CalculateRouteMatrixCommandOutput,
  type CalculateRouteMatrixRequest,
  GeoRoutesClient,
} from "@aws-sdk/client-geo-routes";
import type { TravelProviderDeclaration } from "#shared/domain/travel/providers";
import { type TableAnswer, TravelSourceError, type TravelTableSource } from "#shared/domain/travel/road-matrix";
import type { Location } from "#shared/routing/model";

type AmazonLocationDeclaration = Extract<TravelProviderDeclaration, { kind: "amazonLocation" }>;

/** Entry errors that say there is no route between the two points (not worth asking again). */
const noRouteErrors = new Set([
  "NoRoute",
  "NoMatch",
  "NoMatchOrigin",
  "NoMatchDestination",
  "OutOfBounds",
  "OutOfBoundsOrigin",
  "OutOfBoundsDestination",
  "Violation",
]);
/** SDK errors that asking again may cure. */
const retryableErrors = new Set([
  "ThrottlingException",
  "InternalServerException",
  "ServiceUnavailableException",
  "RequestTimeout",
  "TimeoutError",
]);

/**
 * Amazon Location Service's routes matrix (`geo-routes:CalculateRouteMatrix`, billed per origin ×
 * destination). Requests use an automatic bounding circle around their points, which allows up to 500
 * origins, 500 destinations and 160,000 pairs per request (an unbounded request allows only 100 pairs).
 * Durations come in seconds, distances in metres.
 */
export function amazonLocationTableSource(
  declaration: AmazonLocationDeclaration,
  client: GeoRoutesClient = defaultClient(declaration.region),
): TravelTableSource {
  const maxOrigins = Math.min(declaration.maxOrigins, Math.floor(160_000 / declaration.maxDestinations));
  const avoid = declaration.avoid;
  return {
    kind: "amazonLocation",
    maxSources: maxOrigins,
    maxDestinations: declaration.maxDestinations,
    concurrency: declaration.concurrency,
    timeoutMs: declaration.timeoutMs,
    retries: declaration.retries,
    async table(
      points: readonly Location[],
      sources: readonly number[],
      destinations: readonly number[],
      signal: AbortSignal,
    ): Promise<TableAnswer> {
      const position = (point: number) => [points[point]!.lng, points[point]!.lat];
      const request: CalculateRouteMatrixRequest = {
        Origins: sources.map((point) => ({ Position: position(point) })),
        Destinations: destinations.map((point) => ({ Position: position(point) })),
        TravelMode: declaration.travelMode,
        RoutingBoundary: { Geometry: { AutoCircle: {} } },
        ...(avoid
          ? {
              Avoid: {
                ...(avoid.tollRoads !== undefined ? { TollRoads: avoid.tollRoads } : {}),
                ...(avoid.ferries !== undefined ? { Ferries: avoid.ferries } : {}),
                ...(avoid.controlledAccessHighways !== undefined ? { ControlledAccessHighways: avoid.controlledAccessHighways } : {}),
                ...(avoid.dirtRoads !== undefined ? { DirtRoads: avoid.dirtRoads } : {}),
                ...(avoid.tunnels !== undefined ? { Tunnels: avoid.tunnels } : {}),
              },
            }
          : {}),
      };
      let output: CalculateRouteMatrixCommandOutput;
      try {
        output = await client.send(new CalculateRouteMatrixCommand(request), { abortSignal: signal });
      } catch (error) {
        const name = error instanceof Error ? error.name : "";
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
        if (name === "TimeoutError" || name === "AbortError") throw Object.assign(new Error("timed out"), { name: "TimeoutError" });
        throw new TravelSourceError(
          `${name || "error"}: ${error instanceof Error ? error.message : String(error)}`,
          retryableErrors.has(name) || status >= 500 || status === 0,
          status === 0 ? "unreachable" : retryableErrors.has(name) || status >= 500 ? "badAnswer" : "refused",
        );
      }
      const matrix = output.RouteMatrix ?? [];
      const durations: (number | null)[][] = [];
      const distances: (number | null)[][] = [];
      for (const row of matrix) {
        const durationRow: (number | null)[] = [];
        const distanceRow: (number | null)[] = [];
        for (const entry of row ?? []) {
          if (entry.Error && !noRouteErrors.has(entry.Error))
            throw new TravelSourceError(`an entry failed (${entry.Error})`, true, "badAnswer");
          const routed = !entry.Error && entry.Duration !== undefined && entry.Distance !== undefined;
          durationRow.push(routed ? entry.Duration! : null);
          distanceRow.push(routed ? entry.Distance! : null);
        }
        durations.push(durationRow);
        distances.push(distanceRow);
      }
      return { durationsSeconds: durations, distancesMetres: distances };
    },
  };
}

const clients = new Map<string, GeoRoutesClient>();

/** One client per region, kept for the warm Lambda's later runs; one attempt per send (the matrix builder retries, within its own bound). */
function defaultClient(region: string | undefined): GeoRoutesClient {
  const key = region ?? "";
  let client = clients.get(key);
  if (!client) {
    client = new GeoRoutesClient({ maxAttempts: 1, ...(region ? { region } : {}) });
    clients.set(key, client);
  }
  return client;
}
