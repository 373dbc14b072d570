import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { expect } from "vitest";
import { defaultMaxWebhooks } from "#shared/domain/tenants/plans";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
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
  const answers = await Promise.all(Array.from({ length: racers }, (_, i) => api.post("/webhook", { ...subscription, url: `${subscription.url}/race-${i}` })));
  for (const answer of answers) {
    expect([201, 409], JSON.stringify(answer.body)).toContain(answer.status);
    if (answer.status === 409) expect(answer.body).toMatchObject({ status: false, failedCode: "webhook-409" });
  }
  const listed = await api.get(`/webhooks?limit=100`);
  expect(listed.status).toBe(200);
  const count = (await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.webhookCount(organizationId), ConsistentRead: true }))).Item;
  return {
    ids,
    created: answers.filter((answer) => answer.status === 201).length,
    refused: answers.filter((answer) => answer.status === 409).length,
    listed: (listed.body.data as unknown[]).length,
    counted: Number(count?.count),
  };
}
