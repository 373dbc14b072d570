import { configuredPlans } from "#shared/config/tenant-plans";
import { configuredTravelProviders } from "#shared/config/travel-providers";
import type { RunWorkerPorts } from "#shared/domain/runs/run-worker";
import type { RoadProviderDeclaration } from "#shared/domain/travel/providers";
import { buildRoadMatrix, type TravelTableSource, TravelMatrixError } from "#shared/domain/travel/road-matrix";
import { planOf, travelElementsRefusal } from "#shared/domain/usage/run-quota";
import { utcMonth } from "#shared/domain/usage/schema";
import { reserveWithinCap } from "#shared/domain/usage/reservations";
import { logger } from "#shared/observability/powertools";
import { dynamoReservationStore } from "#shared/store/reservation-store";
import { keys } from "#shared/store/keys";
import { tenantPlanName } from "#shared/store/usage-store";
import { s3MatrixCache } from "#shared/travel/matrix-cache";
import { osrmRouteSource, osrmTableSource } from "#shared/travel/osrm";
import { fetchRoadGeometry } from "#shared/domain/travel/road-geometry";

/**
 * Composition root of road-network travel: the operator's declared providers, their engines (the
 * Amazon Location client is loaded only when such a provider is used), the hub's S3 cache and the
 * plan's monthly travel-elements cap, reserved on the month's run total before the provider is asked
 * and settled with the elements it answered (shared/domain/usage/reservations.ts).
 */
async function tableSource(declaration: RoadProviderDeclaration): Promise<TravelTableSource> {
  if (declaration.kind === "osrm") return osrmTableSource(declaration);
  const { amazonLocationTableSource } = await import("#shared/travel/amazon-location");
  return amazonLocationTableSource(declaration);
}

/** The month's travel-elements counter of the organization and its cap (the plan's travelElementsPerMonth). */
function travelElementsBudget(organizationId: string, now: Date) {
  const counter = {
    key: keys.runSecondsTotal(organizationId, utcMonth(now)),
    attribute: "travelElements",
    itemAttributes: { entity: "runSeconds" },
  };
  return {
    reserve: async (elements: number) => {
      const plan = planOf(await tenantPlanName(organizationId), configuredPlans());
      const outcome = await reserveWithinCap(dynamoReservationStore, counter, elements, plan.travelElementsPerMonth);
      return outcome.granted ? undefined : travelElementsRefusal(plan, outcome.used, elements, now);
    },
    settle: (reserved: number, answered: number) => dynamoReservationStore.settle(counter, reserved, answered),
  };
}

/**
 * The road lines of a plan's routes from the provider's route service (OSRM's `/route`), charged as travel
 * elements on the same cap; undefined when the provider's engine gives none here (great circle, Amazon Location).
 */
export const roadGeometry: NonNullable<RunWorkerPorts["roadGeometry"]> = async ({
  organizationId,
  hubId,
  provider,
  routes,
  now,
  deadline,
}) => {
  const declaration = configuredTravelProviders().providers[provider];
  if (declaration?.kind !== "osrm") return undefined;
  const outcome = await fetchRoadGeometry({
    routes,
    source: osrmRouteSource(declaration),
    deadline: deadline.getTime(),
    elementsBudget: travelElementsBudget(organizationId, now),
  });
  // The tenant sees the kind of failure; the detail (URL, socket error) stays in the logs.
  if (outcome.failure) logger.warn("road geometry failed", { organizationId, hubId, provider, detail: outcome.detail ?? outcome.failure });
  return outcome;
};

export const roadMatrix: RunWorkerPorts["roadMatrix"] = async ({ organizationId, hubId, provider, locations, now, deadline }) => {
  const document = configuredTravelProviders();
  const declaration = document.providers[provider];
  if (!declaration)
    throw new TravelMatrixError(
      `the travel provider ${provider} is not declared any more (declared: ${Object.keys(document.providers).join(", ")})`,
    );
  if (declaration.kind === "greatCircle") return undefined;
  try {
    const matrix = await buildRoadMatrix({
      locations,
      source: await tableSource(declaration),
      cache: s3MatrixCache(organizationId, hubId, provider),
      cacheTtlMs: document.cacheTtlDays * 86_400_000,
      now: () => now.getTime(),
      deadline: deadline.getTime(),
      elementsBudget: travelElementsBudget(organizationId, now),
    });
    return { kind: declaration.kind, matrix };
  } catch (error) {
    // The tenant sees the provider's kind and the kind of failure; the detail (URL, socket error) stays here.
    if (error instanceof TravelMatrixError)
      logger.warn("travel matrix failed", {
        organizationId,
        hubId,
        provider,
        detail: error.detail,
        elementsAnswered: error.elementsAnswered,
      });
    throw error;
  }
};
