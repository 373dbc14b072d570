import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { expect } from "vitest";
import { newId } from "#shared/domain/ids";
import { defaultMaxWebhooks } from "#shared/domain/tenants/plans";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { dynamoWebhookStore } from "#shared/store/webhook-store";
import type { ApiClient } from "#test/support/local-api";

const subscription = { url: "https://hooks.example.com/field-ops", events: ["routing.result.completed"] };

/**
 * Fills an organization (default plan) to one below its webhook cap, then sends `racers` creates at
 * once; answers how many were created and refused, and what the list and the count item then hold.
 */
export async function createsAtCapRace(api: ApiClient, organizationId: string, racers: number) {
  const ids: string[] = [];
  for (let i = 0; i < defaultMaxWebhooks - 1; i++) {
    const created = await api.post("/webhook", { ...subscription, url: `${subscription.url}/${i}` });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    ids.push(created.body.data._id);
  }
  const answers = await Promise.all(
    Array.from({ length: racers }, (_, i) => api.post("/webhook", { ...subscription, url: `${subscription.url}/race-${i}` })),
  );
  for (const answer of answers) {
    expect([201, 409], JSON.stringify(answer.body)).toContain(answer.status);
    if (answer.status === 409) expect(answer.body).toMatchObject({ status: false, failedCode: "webhook-409" });
  }
  const listed = await api.get(`/webhooks?limit=100`);
  expect(listed.status).toBe(200);
  const count = (
    await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.webhookCount(organizationId), ConsistentRead: true }))
  ).Item;
  return {
    ids,
    created: answers.filter((answer) => answer.status === 201).length,
    refused: answers.filter((answer) => answer.status === 409).length,
    listed: (listed.body.data as unknown[]).length,
    counted: Number(count?.count),
  };
}

/** A subscription record as the service builds it (a sealed secret that is not one), for store-level tests. */
export function webhookRecord(organizationId: string, index: number) {
  const now = new Date();
  return {
    _id: newId(new Date(now.getTime() + index)),
    organizationId,
    url: `${subscription.url}/${index}`,
    events: ["routing.result.completed" as const],
    description: null,
    enabled: true,
    disabledReason: null,
    sealedSecret: "v1.not-a-secret",
    createdTime: now.toISOString(),
    updatedTime: now.toISOString(),
  };
}

/**
 * The same race one layer down: `racers` creates through the store (shared/store/webhook-store.ts)
 * started together on warm connections, so their reads of the organization's count (cap − 1) tend to
 * come before any write; then only the count's condition in the transaction keeps all but one out.
 * (Under the strict semantics the proxy's answers are slow enough that every read comes first: the
 * transactions then conflict, which its test checks.)
 */
export async function storeInsertsAtCapRace(organizationId: string, racers: number) {
  for (let i = 0; i < defaultMaxWebhooks - 1; i++)
    expect(await dynamoWebhookStore.insertWithinCap(webhookRecord(organizationId, i), defaultMaxWebhooks)).toBe(true);
  // One open connection per racer first, so no racer's read waits for a connection to be set up.
  const readCount = () =>
    documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.webhookCount(organizationId), ConsistentRead: true }));
  await Promise.all(Array.from({ length: racers }, readCount));
  const outcomes = await Promise.all(
    Array.from({ length: racers }, (_, i) =>
      dynamoWebhookStore.insertWithinCap(webhookRecord(organizationId, 100 + i), defaultMaxWebhooks),
    ),
  );
  const count = (await readCount()).Item;
  const listed = await dynamoWebhookStore.list(organizationId, { limit: 100 });
  return { inserted: outcomes.filter(Boolean).length, listed: listed.items.length, counted: Number(count?.count) };
}
