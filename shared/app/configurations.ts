import { configuredTravelProviders } from "#shared/config/travel-providers";
import { travelProviderRefusalOf } from "#shared/app/travel-plan";
import { createConfigurationService } from "#shared/domain/configurations/service";
import { dynamoConfigurationStore } from "#shared/store/configuration-store";

/** Composition root of the configuration profile area: the domain service over its DynamoDB store. */
export const configurationService = createConfigurationService(
  dynamoConfigurationStore,
  undefined,
  () => Object.keys(configuredTravelProviders().providers),
  travelProviderRefusalOf,
);

/**
 * For the routing schedules/runs area: the profile named by a schedule's `configurationId`, or
 * undefined when the organization has no such profile. Read at run time, so a change to the profile
 * applies from the next run.
 */
export const findConfiguration = (organizationId: string, configurationId: string) =>
  configurationService.findConfiguration(organizationId, configurationId);

/**
 * Implements the schedules area's `HubConfigurations` port (shared/domain/schedules/service.ts):
 * the schedules' `hubId` filter and hub-restricted tokens resolve through it.
 */
export const hubConfigurations = {
  configurationIdsOfHub: (organizationId: string, hubId: string) => configurationService.configurationIdsOfHub(organizationId, hubId),
};
