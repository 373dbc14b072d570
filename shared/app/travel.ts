import { configuredPlans } from "#shared/config/tenant-plans";
import { configuredTravelProviders } from "#shared/config/travel-providers";
import type { RunWorkerPorts } from "#shared/domain/runs/run-worker";
import type { RoadProviderDeclaration, TravelProviderDeclaration } from "#shared/domain/travel/providers";
import { providerElementsAttribute, travelElementsBudget as spendBudget } from "#shared/domain/travel/spend";
import { buildRoadMatrix, type ElementsBudget, type TravelTableSource, TravelMatrixError } from "#shared/domain/travel/road-matrix";
import { planOf, travelElementsRefusal } from "#shared/domain/usage/run-quota";
import { utcMonth } from "#shared/domain/usage/schema";
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

/**
 * The month's travel-elements counters of the organization and their caps: the plan's
 * travelElementsPerMonth over every provider, and the provider's dollar cap (shared/domain/travel/spend.ts).
 */
function travelElementsBudget(organizationId: string, provider: string, declaration: TravelProviderDeclaration, now: Date): ElementsBudget {
  // Built at the first reservation: a run the cache answers whole reads no tenant record.
  let budget: Promise<ElementsBudget> | undefined;
  const built = () => {
    budget ??= (async () => {
      const plan = planOf(await tenantPlanName(organizationId), configuredPlans());
      const counter = (attribute: string) => ({
        key: keys.runSecondsTotal(organizationId, utcMonth(now)),
        attribute,
        itemAttributes: { entity: "runSeconds" },
      });
      return spendBudget({
        store: dynamoReservationStore,
        plan,
        provider,
        declaration,
        planCounter: counter("travelElements"),
        providerCounter: counter(providerElementsAttribute(provider)),
        now,
        elementsRefusal: (used, elements) => travelElementsRefusal(plan, used, elements, now) ?? "",
      });
    })();
    return budget;
  };
  return {
    reserve: async (elements) => (await built()).reserve(elements),
    settle: async (reserved, answered) => (await built()).settle(reserved, answered),
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
    elementsBudget: travelElementsBudget(organizationId, provider, declaration, now),
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
      cache: s3MatrixCache(organizationId, hubId, provider, { maxPoints: document.cacheMaxPoints }),
      cacheTtlMs: document.cacheTtlDays * 86_400_000,
      now: () => now.getTime(),
      deadline: deadline.getTime(),
      elementsBudget: travelElementsBudget(organizationId, provider, declaration, now),
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
