import { CreateQueueCommand, DeleteMessageCommand, type Message, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { createRoutingRunHandler } from "#functions/jobs/routing-run";
import { enqueueOnDemandRun } from "#shared/app/routing-result-commands";
import { schedulerTickPorts } from "#shared/app/scheduler-tick";
import { resetAppConfig } from "#shared/config/env";
import { onDemandRunKey } from "#shared/domain/runs/active-runs";
import type { RoutingRunMessage } from "#shared/domain/runs/messages";
import type { RunWorkerPorts } from "#shared/domain/runs/run-worker";
import { activeRunLeaseSeconds, runWorkerTimeoutSeconds } from "#shared/queue/definitions";
import { sendRunMessages } from "#shared/queue/run-queue";
import { takeActiveRunSlot } from "#shared/store/active-run-store";
import { workerSlotStore } from "#shared/store/worker-slot-store";
import { sqsEvent } from "#test/integration/runs/run-fixtures";
import { useIsolatedTableAndQueue } from "#test/support/isolated-resources";
import { newOrganizationId } from "#test/support/local-api";

/**
 * Spillover of the run queue (shared/app/run-spillover.ts): with 4 workers an organization may hold 3
 * (RUN_WORKER_SLOTS_PER_TENANT), so its runs beyond 3 active ones wait in the spillover queue, which
 * only 3 workers read; the run queue holds at most 3 of its runs, and the worker the flooding
 * organization cannot hold reaches another organization's run after at most those 3. Asserted by
 * what each queue holds and in which order, on this file's own table and queues.
 */
const share = 3;

describe.sequential("Module: run spillover (a flooding organization delays another's run by at most one worker slot)", () => {
  let sqs: SQSClient;
  let runQueueUrl: string;
  let spilloverQueueUrl: string;
  beforeAll(async () => {
    ({ sqs, queueUrl: runQueueUrl } = await useIsolatedTableAndQueue());
    spilloverQueueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `isolated-spillover-${Date.now()}` }))).QueueUrl as string;
    process.env.RUN_SPILLOVER_QUEUE_URL = spilloverQueueUrl;
    process.env.RUN_WORKER_SLOTS_PER_TENANT = String(share);
    resetAppConfig();
  });

  /** Receives the queue's messages one at a time, as workers of batch size 1 do (each kept invisible: it is being worked), then deletes them. */
  async function workersReceive(queueUrl: string): Promise<Array<{ organizationId: string; id: string }>> {
    const received: Message[] = [];
    for (let empty = 0; empty < 2; ) {
      const message = (
        await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 60, WaitTimeSeconds: 0 }))
      ).Messages?.[0];
      if (message) received.push(message);
      else empty++;
    }
    for (const message of received)
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle as string }));
    return received.map((message) => {
      const body = JSON.parse(message.Body as string) as { organizationId: string; resultId?: string; scheduleId?: string };
      return { organizationId: body.organizationId, id: body.resultId ?? body.scheduleId ?? "" };
    });
  }

  it("on-demand runs: A's 10 runs put 3 in the run queue and 7 in the spillover; B's run is the 4th message of the run queue, the one the 4th worker receives", async () => {
    const flooding = newOrganizationId();
    const other = newOrganizationId();
    const enqueue = async (organizationId: string, resultId: string) => {
      expect(await takeActiveRunSlot(organizationId, onDemandRunKey(resultId), 50, new Date(), activeRunLeaseSeconds)).toBe(true);
      await enqueueOnDemandRun({ kind: "onDemand", organizationId, resultId });
    };
    for (let i = 0; i < 10; i++) await enqueue(flooding, `a-${i}`);
    await enqueue(other, "b-0");

    const fromRunQueue = await workersReceive(runQueueUrl);
    expect(fromRunQueue).toEqual([
      ...["a-0", "a-1", "a-2"].map((id) => ({ organizationId: flooding, id })),
      { organizationId: other, id: "b-0" },
    ]);
    const fromSpillover = await workersReceive(spilloverQueueUrl);
    expect(fromSpillover.map((run) => run.id).sort()).toEqual(["a-3", "a-4", "a-5", "a-6", "a-7", "a-8", "a-9"]);
  });

  it("scheduled runs: the tick sends an organization's runs beyond its share to the spillover, oldest slots first in the run queue", async () => {
    const flooding = newOrganizationId();
    const ports = schedulerTickPorts(new Date());
    const messages: RoutingRunMessage[] = Array.from({ length: 8 }, (_, i) => ({
      kind: "schedule",
      organizationId: flooding,
      scheduleId: `schedule-${i}`,
      slot: "2026-11-25T10:00:00.000Z",
      scheduledFor: "2026-11-25T10:00:00.000Z",
      scheduleUpdatedTime: "2026-11-25 09:00:00",
    }));
    const taken = await ports.takeActiveRuns(flooding, messages, 50);
    expect(taken).toHaveLength(8);
    expect(await ports.enqueue(taken)).toEqual([]);

    expect((await workersReceive(runQueueUrl)).map((run) => run.id)).toEqual(["schedule-0", "schedule-1", "schedule-2"]);
    expect((await workersReceive(spilloverQueueUrl)).map((run) => run.id).sort()).toEqual([
      "schedule-3",
      "schedule-4",
      "schedule-5",
      "schedule-6",
      "schedule-7",
    ]);
  });

  it("a run found in the run queue while its organization holds its share of the workers moves to the spillover queue, not back to the run queue", async () => {
    const flooding = newOrganizationId();
    const slots = workerSlotStore("routing-run", share, runWorkerTimeoutSeconds + 60);
    for (let i = 0; i < share; i++) expect(await slots.take(flooding, `held-${i}`)).toBe(true);
    await enqueueOnDemandRun({ kind: "onDemand", organizationId: flooding, resultId: "late" });
    const [message] = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: runQueueUrl, MaxNumberOfMessages: 1 }))).Messages ?? [];
    expect(message).toBeDefined();

    const worker = createRoutingRunHandler(() => ({}) as RunWorkerPorts);
    expect((await worker(sqsEvent([message as Message]))).batchItemFailures).toEqual([]);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: runQueueUrl, ReceiptHandle: message?.ReceiptHandle as string }));

    expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: runQueueUrl, WaitTimeSeconds: 0 }))).Messages ?? []).toEqual([]);
    // Deferred with a delay (4–6 s on the first deferral).
    const moved = await sqs.send(new ReceiveMessageCommand({ QueueUrl: spilloverQueueUrl, WaitTimeSeconds: 10 }));
    expect(JSON.parse(moved.Messages?.[0]?.Body ?? "{}")).toEqual({
      kind: "onDemand",
      organizationId: flooding,
      resultId: "late",
      deferrals: 1,
    });
  });

  it("when one queue's send fails, answers only that queue's runs as unsent: the other queue's runs are queued and must not be released", async () => {
    const organizationId = newOrganizationId();
    const run = (scheduleId: string): RoutingRunMessage => ({
      kind: "schedule",
      organizationId,
      scheduleId,
      slot: "2026-11-25T10:00:00.000Z",
      scheduledFor: "2026-11-25T10:00:00.000Z",
      scheduleUpdatedTime: "2026-11-25 09:00:00",
    });
    const [kept, spilled] = [run("kept"), run("spilled")];
    process.env.RUN_SPILLOVER_QUEUE_URL = `${spilloverQueueUrl}-missing`;
    resetAppConfig();
    try {
      expect(await sendRunMessages([kept, spilled], new Set([spilled]))).toEqual([spilled]);
    } finally {
      process.env.RUN_SPILLOVER_QUEUE_URL = spilloverQueueUrl;
      resetAppConfig();
    }
    expect((await workersReceive(runQueueUrl)).map((received) => received.id)).toEqual(["kept"]);
  });
});
