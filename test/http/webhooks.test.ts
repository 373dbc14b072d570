import { DeleteCommand, GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { defaultMaxWebhooks } from "#shared/domain/tenants/plans";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { dynamoWebhookStore } from "#shared/store/webhook-store";
import { createsAtCapRace, storeInsertsAtCapRace, webhookRecord } from "#test/support/webhook-cap";
import { refusal } from "#test/support/refusals";

const subscription = { url: "https://hooks.example.com/field-ops", events: ["routing.result.completed", "routing.result.failed"] };

describe("Webhook subscriptions", () => {
  it("answers the secret once, keeps it sealed in the table and never shows it again", async () => {
    const { organizationId, api } = newTenant();
    const created = await api.post("/webhook", { ...subscription, description: "Dispatch board" });
    expect(created.status).toBe(201);
    const webhook = created.body.data;
    expect(webhook).toMatchObject({ ...subscription, description: "Dispatch board", enabled: true, disabledReason: null, organizationId });
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const read = await api.get(`/webhook/${webhook._id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).not.toHaveProperty("secret");
    expect(JSON.stringify(read.body)).not.toContain(webhook.secret.slice(6));
    const listed = await api.get("/webhooks");
    expect(listed.body.data.map((item: { _id: string }) => item._id)).toEqual([webhook._id]);
    expect(JSON.stringify(listed.body)).not.toContain(webhook.secret.slice(6));

    const item = (await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.webhook(organizationId, webhook._id) })))
      .Item;
    expect(item?.sealedSecret).toMatch(/^v1\./);
    expect(JSON.stringify(item)).not.toContain(webhook.secret.slice(6));
  });

  it("patches and deletes; another organization's webhook is 404", async () => {
    const { api } = newTenant();
    const other = newTenant();
    const id = (await api.post("/webhook", subscription)).body.data._id;
    const stored = await api.get(`/webhook/${id}`);
    for (const answer of [
      await other.api.get(`/webhook/${id}`),
      await other.api.patch(`/webhook/${id}`, { enabled: false }),
      await other.api.delete(`/webhook/${id}`),
    ]) {
      expect(refusal(answer)).toEqual({ status: 404, failedCode: "sys-404" });
    }
    expect((await api.get(`/webhook/${id}`)).body).toEqual(stored.body);
    expect((await other.api.get("/webhooks")).body.data).toEqual([]);

    const patched = await api.patch(`/webhook/${id}`, { events: ["routing.schedule.skipped"], enabled: false });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      events: ["routing.schedule.skipped"],
      enabled: false,
      disabledReason: "disabled by a client",
    });
    expect((await api.patch(`/webhook/${id}`, { enabled: true })).body.data).toMatchObject({ enabled: true, disabledReason: null });
    expect((await api.delete(`/webhook/${id}`)).status).toBe(200);
    expect(refusal(await api.get(`/webhook/${id}`))).toEqual({ status: 404, failedCode: "sys-404" });
  });

  it.each([
    ["http (not https)", "http://hooks.example.com/x"],
    ["loopback", "https://127.0.0.1:8443/x"],
    ["localhost", "https://localhost/x"],
    ["private address", "https://10.1.2.3/x"],
    ["cloud metadata (link-local)", "https://169.254.169.254/latest/meta-data"],
    ["credentials in the URL", "https://user:pass@hooks.example.com/x"],
    ["not a URL", "hooks"],
  ])("refuses a URL that is %s with 400 on url, and stores nothing", async (_label, url) => {
    const { api } = newTenant();
    const answer = await api.post("/webhook", { ...subscription, url });
    expect(refusal(answer)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(answer.body.errors.map((error: { field: string }) => error.field)).toContain("url");
    expect((await api.get("/webhooks")).body.data).toEqual([]);
  });

  it.each([
    ["an unknown event type", { ...subscription, events: ["routing.result.exploded"] }, "events"],
    ["no event type", { ...subscription, events: [] }, "events"],
    ["a repeated event type", { ...subscription, events: ["routing.result.failed", "routing.result.failed"] }, "events"],
    ["an unknown field", { ...subscription, secret: "whsec_mine" }, "secret"],
  ])("refuses %s with 400", async (_label, body, field) => {
    const { api } = newTenant();
    const answer = await api.post("/webhook", body);
    expect(refusal(answer)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(JSON.stringify(answer.body.errors)).toContain(field);
    expect((await api.get("/webhooks")).body.data).toEqual([]);
  });

  it("holds at most the plan's number of webhooks per organization (409 beyond it)", async () => {
    const { api } = newTenant();
    for (let i = 0; i < defaultMaxWebhooks; i++)
      expect((await api.post("/webhook", { ...subscription, url: `${subscription.url}/${i}` })).status).toBe(201);
    const refused = await api.post("/webhook", subscription);
    expect(refused.status).toBe(409);
    expect(refused.body.failedCode).toBe("webhook-409");
    expect((await api.get("/webhooks?limit=100")).body.data).toHaveLength(defaultMaxWebhooks);
    // Another organization is not affected.
    expect((await newTenant().api.post("/webhook", subscription)).status).toBe(201);
  });

  it("keeps the cap exact: of 12 simultaneous creates at cap - 1 exactly one is 201, and a delete frees its place", async () => {
    const { organizationId, api } = newTenant();
    const race = await createsAtCapRace(api, organizationId, 12);
    expect(race.created).toBe(1);
    expect(race.refused).toBe(11);
    expect(race.listed).toBe(defaultMaxWebhooks);
    expect(race.counted).toBe(defaultMaxWebhooks);
    // A delete lowers the count in its own transaction: one more create fits, the next does not.
    expect((await api.delete(`/webhook/${race.ids[0]}`)).status).toBe(200);
    expect((await api.post("/webhook", subscription)).status).toBe(201);
    expect(refusal(await api.post("/webhook", subscription))).toEqual({ status: 409, failedCode: "webhook-409" });
    expect((await api.get(`/webhooks?limit=100`)).body.data).toHaveLength(defaultMaxWebhooks);
  });

  it("keeps the cap exact when simultaneous creates all read the count before writing (the store, on warm connections)", async () => {
    const race = await storeInsertsAtCapRace(newTenant().organizationId, 12);
    expect(race).toEqual({ inserted: 1, listed: defaultMaxWebhooks, counted: defaultMaxWebhooks });
  });

  it("seeds the count of an organization whose subscriptions predate it from the subscriptions themselves", async () => {
    const { organizationId, api } = newTenant();
    for (let i = 0; i < defaultMaxWebhooks - 1; i++) expect((await api.post("/webhook", subscription)).status).toBe(201);
    await documentClient().send(new DeleteCommand({ TableName: tableName(), Key: keys.webhookCount(organizationId) }));
    expect((await api.post("/webhook", subscription)).status).toBe(201);
    expect(refusal(await api.post("/webhook", subscription))).toEqual({ status: 409, failedCode: "webhook-409" });
    const count = (
      await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.webhookCount(organizationId), ConsistentRead: true }))
    ).Item;
    expect(count?.count).toBe(defaultMaxWebhooks);
  });

  it("seeds the count from a delete too, without the deleted subscription, so a create after it counts right", async () => {
    const { organizationId, api } = newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await api.post("/webhook", subscription)).body.data._id);
    await documentClient().send(new DeleteCommand({ TableName: tableName(), Key: keys.webhookCount(organizationId) }));
    expect((await api.delete(`/webhook/${ids[0]}`)).status).toBe(200);
    const countItem = async () =>
      (
        await documentClient().send(
          new GetCommand({ TableName: tableName(), Key: keys.webhookCount(organizationId), ConsistentRead: true }),
        )
      ).Item;
    expect((await countItem())?.count).toBe(2);
    expect((await api.post("/webhook", subscription)).status).toBe(201);
    expect((await countItem())?.count).toBe(3);
    expect((await api.get("/webhooks")).body.data).toHaveLength(3);
  });

  it("refuses every create under a cap of 0 (a plan that allows no subscriptions) without asking DynamoDB for a count of 0", async () => {
    const { organizationId } = newTenant();
    expect(await dynamoWebhookStore.insertWithinCap(webhookRecord(organizationId, 0), 0)).toBe(false);
    expect((await dynamoWebhookStore.list(organizationId, { limit: 10 })).items).toEqual([]);
  });

  it("requires the webhook permission slugs", async () => {
    const { organizationId } = newTenant();
    const viewer = apiClient(tokenFor({ organizationId, permissions: ["view/webhook"] }));
    expect((await viewer.get("/webhooks")).status).toBe(200);
    expect(refusal(await viewer.post("/webhook", subscription))).toEqual({ status: 403, failedCode: "sys-035" });
    expect((await viewer.get("/webhooks")).body.data).toEqual([]);
  });
});
