import { configuredPlans } from "#shared/config/tenant-plans";
import { configuredTravelProviders } from "#shared/config/travel-providers";
import type { RunWorkerPorts } from "#shared/domain/runs/run-worker";
import type { RoadProviderDeclaration } from "#shared/domain/travel/providers";
import { buildRoadMatrix, type TravelTableSource, TravelMatrixError } from "#shared/domain/travel/road-matrix";
import { planOf, travelElementsRefusal } from "#shared/domain/usage/run-quota";
import { utcMonth } from "#shared/domain/usage/schema";
import { tenantPlanName, travelElementsUsed } from "#shared/store/usage-store";
import { s3MatrixCache } from "#shared/travel/matrix-cache";
import { osrmTableSource } from "#shared/travel/osrm";

/**
 * Composition root of road-network travel: the operator's declared providers, their engines (the
 * Amazon Location client is loaded only when such a provider is used), the hub's S3 cache and the
 * plan's monthly travel-elements cap.
 */
async function tableSource(declaration: RoadProviderDeclaration): Promise<TravelTableSource> {
  if (declaration.kind === "osrm") return osrmTableSource(declaration);
  const { amazonLocationTableSource } = await import("#shared/travel/amazon-location");
  return amazonLocationTableSource(declaration);
}

export const roadMatrix: RunWorkerPorts["roadMatrix"] = async ({ organizationId, hubId, provider, locations, now, deadline }) => {
  const document = configuredTravelProviders();
  const declaration = document.providers[provider];
  if (!declaration)
    throw new TravelMatrixError(
      `the travel provider ${provider} is not declared any more (declared: ${Object.keys(document.providers).join(", ")})`,
    );
  if (declaration.kind === "greatCircle") return undefined;
  const matrix = await buildRoadMatrix({
    locations,
    source: await tableSource(declaration),
    cache: s3MatrixCache(organizationId, hubId, provider),
    cacheTtlMs: document.cacheTtlDays * 86_400_000,
    now: () => now.getTime(),
    deadline: deadline.getTime(),
    refusal: async (elements) => {
      const [planName, used] = await Promise.all([tenantPlanName(organizationId), travelElementsUsed(organizationId, utcMonth(now))]);
      return travelElementsRefusal(planOf(planName, configuredPlans()), used, elements, now);
    },
  });
  return { kind: declaration.kind, matrix };
};
