import { GeoRoutesClient } from "@aws-sdk/client-geo-routes";
import { describe, expect, it } from "vitest";
import { parseTravelProviders, type TravelProviderDeclaration } from "#shared/domain/travel/providers";
import { buildRoadMatrix, UNREACHABLE_SECONDS } from "#shared/domain/travel/road-matrix";
import type { Location } from "#shared/routing/model";
import { amazonLocationTableSource } from "#shared/travel/amazon-location";

/**
 * The Amazon Location adapter through the real SDK v3 client (@aws-sdk/client-geo-routes): requests are
 * serialised and answers deserialised by the SDK; only the HTTP exchange is stubbed (the client's
 * `requestHandler`), since the service has no emulator. The stub answers the CalculateRouteMatrix REST
 * API (POST /v2/route-matrix) with the JSON documented in the service's API reference.
 */
interface Exchange {
  body: Record<string, unknown>;
  path: string;
}

function stubbedClient(answer: (request: Exchange, n: number) => { status: number; body: unknown; errorType?: string }) {
  const exchanges: Exchange[] = [];
  const client = new GeoRoutesClient({
    region: "eu-west-1",
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    maxAttempts: 1,
    requestHandler: {
      handle: async (request: { path: string; body: string | Uint8Array }) => {
        const text = typeof request.body === "string" ? request.body : new TextDecoder().decode(request.body);
        const exchange = { path: request.path, body: JSON.parse(text) };
        exchanges.push(exchange);
        const reply = answer(exchange, exchanges.length);
        return {
          response: {
            statusCode: reply.status,
            headers: { "content-type": "application/json", ...(reply.errorType ? { "x-amzn-errortype": reply.errorType } : {}) },
            body: new TextEncoder().encode(JSON.stringify(reply.body)),
          },
        };
      },
    } as never,
  });
  return { client, exchanges };
}

const declaration = (settings: Record<string, unknown> = {}) =>
  parseTravelProviders({
    providers: { aws: { kind: "amazonLocation", travelMode: "Truck", avoid: { tollRoads: true, ferries: true }, ...settings } },
  }).providers.aws as Extract<TravelProviderDeclaration, { kind: "amazonLocation" }>;

/** Seconds and metres of origin → destination in the stub: asymmetric on purpose. */
const entry = (origin: number[], destination: number[]) => ({
  Duration: Math.round(
    100_000 * (Math.abs(origin[0]! - destination[0]!) + 2 * Math.abs(origin[1]! - destination[1]!)) +
      (origin[0]! < destination[0]! ? 30 : 0),
  ),
  Distance:
    Math.round(1_000_000 * (Math.abs(origin[0]! - destination[0]!) + Math.abs(origin[1]! - destination[1]!))) +
    (origin[1]! < destination[1]! ? 200 : 0),
});
const matrixOf = (body: Record<string, unknown>) => {
  const origins = (body.Origins as { Position: number[] }[]).map((o) => o.Position);
  const destinations = (body.Destinations as { Position: number[] }[]).map((d) => d.Position);
  return {
    ErrorCount: 0,
    PricingBucket: "bucket",
    RouteMatrix: origins.map((o) => destinations.map((d) => entry(o, d))),
    RoutingBoundary: { Unbounded: false },
  };
};

const points: Location[] = Array.from({ length: 7 }, (_, i) => ({ lat: 52.5 + 0.01 * i, lng: 13.4 + 0.013 * ((i * 3) % 7) }));
const noSleep = async () => undefined;

describe("Amazon Location routes matrix adapter", () => {
  it("sends [lng, lat] origins and destinations within its per-request limits, with the travel mode and avoidances, and keeps the directed entries", async () => {
    const { client, exchanges } = stubbedClient((exchange) => ({ status: 200, body: matrixOf(exchange.body) }));
    const source = amazonLocationTableSource(declaration({ maxOrigins: 3, maxDestinations: 4 }), client);
    const matrix = await buildRoadMatrix({ locations: points, source, cacheTtlMs: 1, now: () => 0, sleep: noSleep });
    expect(exchanges.every((exchange) => exchange.path === "/v2/route-matrix")).toBe(true);
    expect(exchanges).toHaveLength(6); // ⌈7/3⌉ × ⌈7/4⌉
    expect(Math.max(...exchanges.map((e) => (e.body.Origins as unknown[]).length))).toBe(3);
    expect(Math.max(...exchanges.map((e) => (e.body.Destinations as unknown[]).length))).toBe(4);
    expect(exchanges[0]!.body).toMatchObject({
      TravelMode: "Truck",
      RoutingBoundary: { Geometry: { AutoCircle: {} } },
      Avoid: { TollRoads: true, Ferries: true },
      Origins: [
        { Position: [points[0]!.lng, points[0]!.lat] },
        { Position: [points[1]!.lng, points[1]!.lat] },
        { Position: [points[2]!.lng, points[2]!.lat] },
      ],
    });
    expect(matrix.elementsRequested).toBe(49);
    const position = (l: Location) => [l.lng, l.lat];
    for (let i = 0; i < 7; i++)
      for (let j = 0; j < 7; j++) {
        if (i === j) continue;
        expect(matrix.spec.durationsSeconds[i * 7 + j]).toBe(Math.fround(entry(position(points[i]!), position(points[j]!)).Duration));
        expect(matrix.spec.distancesMetres[i * 7 + j]).toBe(Math.fround(entry(position(points[i]!), position(points[j]!)).Distance));
      }
    expect(matrix.spec.durationsSeconds[0 * 7 + 1]).not.toBe(matrix.spec.durationsSeconds[1 * 7 + 0]);
  });

  it("retries throttling and failed entries, marks NoRoute entries unreachable, and fails at once on AccessDenied", async () => {
    const { client, exchanges } = stubbedClient((exchange, n) => {
      if (n === 1) return { status: 429, errorType: "ThrottlingException", body: { message: "Rate exceeded" } };
      const answer = matrixOf(exchange.body);
      if (n === 2) answer.RouteMatrix[0]![1] = { Error: "Other" } as never;
      if (n === 3) answer.RouteMatrix[0]![1] = { Error: "NoRoute" } as never;
      return { status: 200, body: answer };
    });
    const matrix = await buildRoadMatrix({
      locations: points.slice(0, 3),
      source: amazonLocationTableSource(declaration({ retries: 2 }), client),
      cacheTtlMs: 1,
      now: () => 0,
      sleep: noSleep,
    });
    expect(exchanges).toHaveLength(3);
    expect(matrix.spec.durationsSeconds[1]).toBe(UNREACHABLE_SECONDS);
    expect(matrix.spec.durationsSeconds[2]).toBeGreaterThan(0);

    const denied = stubbedClient(() => ({
      status: 403,
      errorType: "AccessDeniedException",
      body: { message: "not authorized to perform geo-routes:CalculateRouteMatrix" },
    }));
    await expect(
      buildRoadMatrix({
        locations: points.slice(0, 3),
        source: amazonLocationTableSource(declaration(), denied.client),
        cacheTtlMs: 1,
        now: () => 0,
        sleep: noSleep,
      }),
    ).rejects.toMatchObject({
      message: "The amazonLocation travel provider refused a request.",
      detail: "amazonLocation: AccessDeniedException: not authorized to perform geo-routes:CalculateRouteMatrix",
    });
    expect(denied.exchanges).toHaveLength(1);
  });
});
