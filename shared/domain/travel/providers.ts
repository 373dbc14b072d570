import * as z from "zod/mini";
import { DEFAULT_CACHE_MAX_POINTS } from "#shared/domain/travel/matrix-cache-index";

/**
 * Travel providers the operator declares (context `-c travelProviders=<file>` on AWS, the same document
 * in `TRAVEL_PROVIDERS_JSON` locally): named engines a routing configuration profile picks with
 * `travelProvider`. Tenants only ever send a name; the URLs here are the operator's and trusted, so
 * private and loopback addresses are allowed (a self-hosted engine usually lives in the VPC).
 *
 * - `greatCircle`: straight-line distance × the profile's `roadFactor`, at the vehicle's speed (the default).
 * - `osrm`: an OSRM-compatible `/table/v1/{profile}` endpoint; `maxTableSize` is the server's
 *   `--max-table-size` (sources × destinations ≤ maxTableSize² per request).
 * - `amazonLocation`: Amazon Location Service's routes matrix (CalculateRouteMatrix, AWS SDK v3), in the
 *   stack's account; the worker is granted `geo-routes:CalculateRouteMatrix` only when one is declared.
 */
const retrySettings = {
  /** Concurrent requests of one matrix. */
  concurrency: z._default(z.int().check(z.minimum(1), z.maximum(32)), 4),
  /** Per request. */
  timeoutMs: z._default(z.int().check(z.minimum(100), z.maximum(120_000)), 15_000),
  /** Further attempts of a failed request (error, timeout, partial answer) before the matrix fails. */
  retries: z._default(z.int().check(z.minimum(0), z.maximum(5)), 2),
  /**
   * What the operator pays per 1,000 elements (matrix entries, geometry legs), in dollars: what a plan's
   * `travelDollarsPerMonth` is counted in (shared/domain/travel/spend.ts). Omitted: no dollar cap applies.
   */
  pricePer1000Elements: z.optional(z.number().check(z.minimum(0), z.maximum(1_000))),
};

const greatCircleDeclaration = z.strictObject({ kind: z.literal("greatCircle") });

const osrmDeclaration = z.strictObject({
  kind: z.literal("osrm"),
  url: z.url({ protocol: /^https?$/ }),
  profile: z._default(z.string().check(z.regex(/^[A-Za-z0-9_-]{1,40}$/)), "driving"),
  maxTableSize: z._default(z.int().check(z.minimum(2), z.maximum(10_000)), 100),
  ...retrySettings,
});

const amazonLocationDeclaration = z.strictObject({
  kind: z.literal("amazonLocation"),
  travelMode: z._default(z.enum(["Car", "Truck", "Scooter", "Pedestrian"]), "Car"),
  avoid: z.optional(
    z.strictObject({
      tollRoads: z.optional(z.boolean()),
      ferries: z.optional(z.boolean()),
      controlledAccessHighways: z.optional(z.boolean()),
      dirtRoads: z.optional(z.boolean()),
      tunnels: z.optional(z.boolean()),
    }),
  ),
  /** Region of the service (default: the stack's). */
  region: z.optional(z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d$/))),
  /** Origins and destinations per request (the service allows 500 each and 160,000 pairs with a bounding geometry). */
  maxOrigins: z._default(z.int().check(z.minimum(1), z.maximum(500)), 300),
  maxDestinations: z._default(z.int().check(z.minimum(1), z.maximum(500)), 500),
  ...retrySettings,
});

export const travelProviderDeclarationSchema = z.discriminatedUnion("kind", [
  greatCircleDeclaration,
  osrmDeclaration,
  amazonLocationDeclaration,
]);
export type TravelProviderDeclaration = z.infer<typeof travelProviderDeclarationSchema>;
export type RoadProviderDeclaration = Exclude<TravelProviderDeclaration, { kind: "greatCircle" }>;

export const providerNamePattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export const travelProvidersDocumentSchema = z.strictObject({
  providers: z
    .record(
      z.string().check(z.regex(providerNamePattern, "a provider name is letters, digits, _ and -, at most 64")),
      travelProviderDeclarationSchema,
    )
    .check(z.describe("Named providers; a profile's travelProvider names one.")),
  /** Cached matrix entries are asked again after this many days (roads and speeds change). */
  cacheTtlDays: z._default(z.number().check(z.positive(), z.maximum(365)), 30),
  /**
   * Points a hub's cache of one provider keeps, summed over the runs' matrices it holds (most recently used
   * first): its S3 bytes stay within 8 × cacheMaxPoints² (shared/domain/travel/matrix-cache-index.ts).
   */
  cacheMaxPoints: z._default(z.int().check(z.minimum(100), z.maximum(20_000)), DEFAULT_CACHE_MAX_POINTS),
});
export type TravelProvidersDocument = z.infer<typeof travelProvidersDocumentSchema>;

/** The built-in name of today's great-circle estimate: declared even when the document names no provider. */
export const GREAT_CIRCLE_PROVIDER = "greatCircle";

/** Parses the operator's document (throws with zod's message on a bad one: a deployment mistake, not a request's). */
export function parseTravelProviders(document: unknown): TravelProvidersDocument {
  const parsed = travelProvidersDocumentSchema.parse(document ?? { providers: {} });
  return { ...parsed, providers: { [GREAT_CIRCLE_PROVIDER]: { kind: "greatCircle" }, ...parsed.providers } };
}

/** Whether any declared provider is Amazon Location (the stack grants the routes-matrix action only then). */
export const declaresAmazonLocation = (document: TravelProvidersDocument) =>
  Object.values(document.providers).some((provider) => provider.kind === "amazonLocation");
