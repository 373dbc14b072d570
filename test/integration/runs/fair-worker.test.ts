import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { type FairPool, fairPool, workFairly } from "#shared/queue/fair-worker";
import { newOrganizationId } from "#test/support/local-api";
import { useIsolatedTableAndQueue } from "#test/support/isolated-resources";
import type { SQSClient } from "@aws-sdk/client-sqs";

describe.sequential("Module: fair worker (per-tenant slots in DynamoDB, deferral through SQS)", () => {
  let pool: FairPool;
  let sqs: SQSClient;
  let queueUrl: string;
  beforeAll(async () => {
    ({ sqs, queueUrl } = await useIsolatedTableAndQueue());
    pool = fairPool("test-pool", queueUrl, 2, 360);
  });

  it("a tenant holds at most its cap of workers at once; the next message is sent back delayed with its deferrals counted, and another tenant's starts", async () => {
    const flooding = newOrganizationId();
    const other = newOrganizationId();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = 0;
    const bothStarted = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (started !== 2) return;
        clearInterval(check);
        resolve();
      }, 20);
    });
    const running = [1, 2].map((n) =>
      workFairly(pool, { tenantId: flooding, workKey: `run-${n}`, body: { n } }, () => {
        started++;
        return gate;
      }),
    );
    // Both slots are taken before the third message arrives.
    await bothStarted;
    const third = await workFairly(pool, { tenantId: flooding, workKey: "run-3", body: { n: 3 } }, async () => "worked");
    expect(third.started).toBe(false);
    const theirs = await workFairly(pool, { tenantId: other, workKey: "run-1", body: { n: 1 } }, async () => "worked");
    expect(theirs).toEqual({ started: true, value: "worked" });
    release();
    await Promise.all(running);

    // The deferred message is back in the queue, delayed (not visible at once), with deferrals + 1.
    const atOnce = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect(atOnce.Messages ?? []).toHaveLength(0);
    const later = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 10 }));
    expect(JSON.parse(later.Messages?.[0]?.Body ?? "{}")).toEqual({ n: 3, deferrals: 1 });
    // Freed: the flooding tenant's next message starts.
    expect((await workFairly(pool, { tenantId: flooding, workKey: "run-3", body: { n: 3 } }, async () => "worked")).started).toBe(true);
  });

  it("a redelivery of a message holding a slot keeps it (same work key), not a second one", async () => {
    const tenant = newOrganizationId();
    const single = fairPool("test-pool-single", queueUrl, 1, 360);
    const outcome = await workFairly(single, { tenantId: tenant, workKey: "run-1", body: {} }, () =>
      workFairly(single, { tenantId: tenant, workKey: "run-1", body: {} }, async () => "inner"),
    );
    expect(outcome).toEqual({ started: true, value: { started: true, value: "inner" } });
  });
});
