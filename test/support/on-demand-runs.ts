import { SQSClient } from "@aws-sdk/client-sqs";
import { expect } from "vitest";
import { appConfig } from "#shared/config/env";
import { deliverQueuedRuns } from "#test/integration/runs/run-fixtures";
import type { ApiClient } from "#test/support/local-api";

/**
 * On-demand runs through the local gateway. The suite's stack runs no queue poller: a test hands its
 * own runs' messages to the run worker and hands every other file's back (run-fixtures deliverQueuedRuns).
 */
const sqs = new SQSClient({});

/** POSTs a create through the local gateway and answers the created resource (201 asserted). */
export async function created(api: ApiClient, path: string, body: unknown) {
  const response = await api.post(path, body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data;
}

/** Hands these results' queued runs to the run worker, `deliveries` times each (more than one is a redelivery). */
export function deliverRuns(resultIds: string[], options: { deliveries?: number } = {}): Promise<void> {
  return deliverQueuedRuns(sqs, appConfig().RUN_QUEUE_URL, resultIds, options);
}

/** POSTs an on-demand run of the profile (with `body`'s other fields), has the worker run it, and answers the stored result. */
export async function runOnDemand(api: ApiClient, configurationId: string, body: Record<string, unknown> = {}) {
  const run = await created(api, "/routing/result", { configurationId, ...body });
  await deliverRuns([run._id]);
  return (await api.get(`/routing/result/${run._id}`)).body.data;
}
