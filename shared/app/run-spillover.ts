import { appConfig } from "#shared/config/env";
import { sharedQueueRoom } from "#shared/domain/fairness/worker-slots";
import { activeRunLeases } from "#shared/store/active-run-store";
import { endedLeases } from "#shared/domain/runs/active-runs";

/**
 * Which queue a new run goes to (shared/domain/fairness/worker-slots.ts, `sharedQueueRoom`): the run
 * queue while its organization has fewer active runs than its share of the workers, else the spillover
 * queue. Decided after the runs took their active-run slots (ORG#o / ACTIVERUNS, one consistent read):
 * the live leases other than the new runs' are the runs ahead of them. Concurrent enqueues of one
 * organization may both see room; the surplus run only costs one deferral (the worker moves a run over
 * the share to the spillover queue). Without a share or a spillover queue, every run goes to the run queue.
 */
export async function runsForSharedQueue(organizationId: string, newRunKeys: readonly string[], now = new Date()): Promise<number> {
  const { RUN_WORKER_SLOTS_PER_TENANT: share, RUN_SPILLOVER_QUEUE_URL: spillover } = appConfig();
  if (share === undefined || spillover === "" || newRunKeys.length === 0) return newRunKeys.length;
  const leases = await activeRunLeases(organizationId);
  const ended = new Set(endedLeases(leases, now));
  const fresh = new Set(newRunKeys);
  const ahead = Object.keys(leases).filter((run) => !ended.has(run) && !fresh.has(run)).length;
  return sharedQueueRoom(ahead, newRunKeys.length, share);
}

/** The run queue, or the spillover queue for a run beyond its organization's share. */
export function runQueueUrl(spilled: boolean): string {
  return spilled ? appConfig().RUN_SPILLOVER_QUEUE_URL : appConfig().RUN_QUEUE_URL;
}
