import { parseTravelProviders, type TravelProvidersDocument } from "#shared/domain/travel/providers";

/**
 * The travel providers of this process: the operator's document (shared/domain/travel/providers.ts)
 * from `TRAVEL_PROVIDERS_JSON` (the CDK stack sets it from context `travelProviders`, a file; the local
 * runtime passes it through). Unset: only `greatCircle`.
 */
let cached: TravelProvidersDocument | undefined;

export function configuredTravelProviders(environment: NodeJS.ProcessEnv = process.env): TravelProvidersDocument {
  cached ??= parseTravelProviders(environment.TRAVEL_PROVIDERS_JSON ? JSON.parse(environment.TRAVEL_PROVIDERS_JSON) : undefined);
  return cached;
}

export function resetConfiguredTravelProviders(): void {
  cached = undefined;
}
