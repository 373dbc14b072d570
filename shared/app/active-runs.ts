import { appConfig } from "#shared/config/env";
import type { ActiveRunSlots } from "#shared/domain/runs/active-runs";
import { activeRunLeaseSeconds } from "#shared/queue/definitions";
import { releaseActiveRunSlot, takeActiveRunSlot } from "#shared/store/active-run-store";

/** The organization's cap on active runs (MAX_ACTIVE_RUNS_PER_ORG), over the store's leases. */
export const activeRunSlots: ActiveRunSlots = {
  max: () => appConfig().MAX_ACTIVE_RUNS_PER_ORG,
  take: (organizationId, runKey) => takeActiveRunSlot(organizationId, runKey, appConfig().MAX_ACTIVE_RUNS_PER_ORG, new Date(), activeRunLeaseSeconds),
  release: releaseActiveRunSlot,
};
