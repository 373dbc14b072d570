import { findConfiguration, hubConfigurations } from "#shared/app/configurations";
import { appConfig } from "#shared/config/env";
import { createScheduleService } from "#shared/domain/schedules/service";
import { dynamoScheduleStore } from "#shared/store/schedule-store";

/**
 * Composition root of the routing-schedule area. Schedules name a configuration profile (it must
 * exist when set), and the `hubId` filter resolves through the hub's profiles.
 */
export const scheduleService = createScheduleService({
  store: dynamoScheduleStore,
  hubConfigurations,
  timeZone: () => appConfig().APP_TIMEZONE,
  configurationExists: async (organizationId, configurationId) => (await findConfiguration(organizationId, configurationId)) !== undefined,
});
