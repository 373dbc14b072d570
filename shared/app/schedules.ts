import { findConfiguration, hubConfigurations } from "#shared/app/configurations";
import { appConfig } from "#shared/config/env";
import { createScheduleService } from "#shared/domain/schedules/service";
import { dynamoScheduleStore } from "#shared/store/schedule-store";

/**
 * Composition root of the routing-schedule area. Schedules name a configuration profile (it must
 * exist when set); the profile's hub decides the `hubId` filter and what a hub-restricted token sees.
 */
export const scheduleService = createScheduleService({
  store: dynamoScheduleStore,
  hubConfigurations,
  timeZone: () => appConfig().APP_TIMEZONE,
  configurationHub: async (organizationId, configurationId) => (await findConfiguration(organizationId, configurationId))?.hubId,
  configurationName: async (organizationId, configurationId) => (await findConfiguration(organizationId, configurationId))?.name,
});
