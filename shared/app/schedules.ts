import { appConfig } from "#shared/config/env";
import { createScheduleService, noHubConfigurations } from "#shared/domain/schedules/service";
import { dynamoScheduleStore } from "#shared/store/schedule-store";

/**
 * Composition root of the routing-schedule area. `hubConfigurations` is the port the hubId filter
 * resolves through; it answers no profiles until configuration profiles exist (routing-runs issue),
 * which then plugs in a store-backed implementation here.
 */
export const scheduleService = createScheduleService({
  store: dynamoScheduleStore,
  hubConfigurations: noHubConfigurations,
  timeZone: () => appConfig().APP_TIMEZONE,
});
