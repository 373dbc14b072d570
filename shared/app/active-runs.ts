import { appConfig } from "#shared/config/env";
import type { ActiveRunSlots } from "#shared/domain/runs/active-runs";
import { activeRunLeaseSeconds } from "#shared/queue/definitions";
import { releaseActiveRunSlot, takeActiveRunSlot } from "#shared/store/active-run-store";
import { maxRunsQueued } from "#shared/app/usage";

/**
 * The organization's cap on active runs, over the store's leases: its tenant plan's `maxRunsQueued`,
 * or MAX_ACTIVE_RUNS_PER_ORG (default 5, the default plan's) when the organization has no tenant record.
 */
export const activeRunSlots: ActiveRunSlots = {
  max: (organizationId) => maxRunsQueued(organizationId, appConfig().MAX_ACTIVE_RUNS_PER_ORG),
  take: async (organizationId, runKey) =>
    takeActiveRunSlot(
      organizationId,
      runKey,
      await maxRunsQueued(organizationId, appConfig().MAX_ACTIVE_RUNS_PER_ORG),
      new Date(),
      activeRunLeaseSeconds,
    ),
  release: releaseActiveRunSlot,
};
