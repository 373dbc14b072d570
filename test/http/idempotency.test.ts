import { createHash, randomUUID } from "node:crypto";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";

const hubBody = { name: "Jakarta depot", address: "Jl. Sudirman 1, Jakarta", lat: -6.2, lng: 106.8, timeZone: "Asia/Jakarta" };

const postWithKey = (api: ApiClient, path: string, body: unknown, key: string) =>
  api.request("POST", path, { body, headers: { "idempotency-key": key } });

async function hubNames(api: ApiClient): Promise<string[]> {
  const response = await api.get("/hubs?limit=100");
  expect(response.status).toBe(200);
  return response.body.data.map((hub: { name: string }) => hub.name);
}

/** The record Powertools keeps: PK `ORG#<org>#IDEM`, SK `<operationId>#<base64 SHA-256 of the JSON key>`. */
function recordKey(organizationId: string, operationId: string, idempotencyKey: string) {
  const digest = createHash("sha256").update(JSON.stringify(idempotencyKey)).digest("base64");
  return { PK: keys.idempotencyPartition(organizationId), SK: keys.idempotencySortKey(operationId, digest) };
}

describe("Idempotency-Key on creating routes", () => {
  it("replays the first answer (status, body, Idempotency-Replayed: true) for the same key and body, without creating again", async () => {
    // Prepare
    const { api } = newTenant();
    const key = randomUUID();
    // Act
    const first = await postWithKey(api, "/hub", hubBody, key);
    const second = await postWithKey(api, "/hub", hubBody, key);
    // Assess
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotency-replayed")).toBeNull();
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotency-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(await hubNames(api)).toEqual([hubBody.name]);
  });

  it("treats the same body with its keys in another order as the same request", async () => {
    const { api } = newTenant();
    const key = randomUUID();
    const reordered = Object.fromEntries(Object.entries(hubBody).reverse());
    const first = await postWithKey(api, "/hub", hubBody, key);
    const second = await postWithKey(api, "/hub", reordered, key);
    expect(second.status).toBe(201);
    expect(second.body.data._id).toBe(first.body.data._id);
  });

  it("answers 422 idem-422 when the key is reused with a different body, and changes nothing", async () => {
    const { api } = newTenant();
    const key = randomUUID();
    expect((await postWithKey(api, "/hub", hubBody, key)).status).toBe(201);
    const reused = await postWithKey(api, "/hub", { ...hubBody, name: "Another depot" }, key);
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ status: false, failedCode: "idem-422" });
    expect(await hubNames(api)).toEqual([hubBody.name]);
  });

  it("keeps no answer of a refused call: the same key and body run again (no replay of the refusal)", async () => {
    // A vehicle naming a hub that does not exist is a 400 from the domain.
    const { api } = newTenant();
    const key = randomUUID();
    const vehicle = { name: "Van", hubId: "6650b1f0c2a4e8a1b2c3d4e5" };
    expect(refusal(await postWithKey(api, "/vehicle", vehicle, key))).toEqual({ status: 400, failedCode: "sys-400" });
    const again = await postWithKey(api, "/vehicle", vehicle, key);
    expect(refusal(again)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(again.headers.get("idempotency-replayed")).toBeNull();
  });

  it("gives a refused caller's key no power over an authorized caller: the refusal is not stored", async () => {
    const { organizationId, api: admin } = newTenant();
    const hub1 = (await admin.post("/hub", hubBody)).body.data._id as string;
    const hub2 = (await admin.post("/hub", { ...hubBody, name: "Second depot" })).body.data._id as string;
    const key = randomUUID();
    const limited = apiClient(tokenFor({ organizationId, hubIds: [hub2] }));
    const visit = { name: "Customer", address: "Jl. Thamrin 2", coordinate: { lat: -6.19, lng: 106.82 }, hubId: hub1 };
    const refused = await postWithKey(limited, "/visit", visit, key);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    const authorized = await postWithKey(admin, "/visit", visit, key);
    expect(authorized.status, JSON.stringify(authorized.body)).toBe(201);
    expect(authorized.headers.get("idempotency-replayed")).toBeNull();
  });

  it("fingerprints the caller: another caller (other user, hubs or hidden fields) reusing the key gets 422, not the first caller's answer", async () => {
    const { organizationId, api: admin } = newTenant();
    const hub1 = (await admin.post("/hub", hubBody)).body.data._id as string;
    const hub2 = (await admin.post("/hub", { ...hubBody, name: "Second depot" })).body.data._id as string;
    const key = randomUUID();
    const visit = { name: "Customer", address: "Jl. Thamrin 2", coordinate: { lat: -6.19, lng: 106.82 }, hubId: hub1 };
    const first = await postWithKey(admin, "/visit", visit, key);
    expect(first.status).toBe(201);
    const others = [
      tokenFor({ organizationId, hubIds: [hub2] }),
      tokenFor({ organizationId, sub: "user-2" }),
      tokenFor({
        organizationId,
        permissionDetails: [{ permissionName: "view/data", dataTypeId: "6650b1f0c2a4e8a1b2c3d4e5", hiddenFields: ["email"] }],
      }),
    ];
    for (const token of others) {
      const replayed = await postWithKey(apiClient(token), "/visit", visit, key);
      expect(replayed.status).toBe(422);
      expect(replayed.body).toMatchObject({ status: false, failedCode: "idem-422" });
    }
    // The same caller again, its hubs and permissions listed in another order, is a replay.
    const same = await postWithKey(admin, "/visit", visit, key);
    expect(same.headers.get("idempotency-replayed")).toBe("true");
    expect(same.body).toEqual(first.body);
    expect((await admin.get("/visits?limit=100")).body.data).toHaveLength(1);
  });

  it("does not keep answers to requests that failed schema validation (nothing ran), so a fixed retry may reuse the key", async () => {
    const { api } = newTenant();
    const key = randomUUID();
    const invalid = await postWithKey(api, "/hub", { ...hubBody, lat: 123 }, key);
    expect(refusal(invalid)).toEqual({ status: 400, failedCode: "sys-400" });
    const fixed = await postWithKey(api, "/hub", hubBody, key);
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get("idempotency-replayed")).toBeNull();
  });

  it("runs concurrent duplicates once: one creates, the others are replays or 409 idem-409", async () => {
    const { api } = newTenant();
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => postWithKey(api, "/hub", hubBody, key)));
    const originals = answers.filter((answer) => answer.status === 201 && answer.headers.get("idempotency-replayed") === null);
    expect(originals).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 201) expect(answer.body.data._id).toBe(originals[0]?.body.data._id);
      else expect({ status: answer.status, failedCode: answer.body.failedCode }).toEqual({ status: 409, failedCode: "idem-409" });
    }
    expect(await hubNames(api)).toEqual([hubBody.name]);
    // Once the first has finished, a retry is a replay.
    const retry = await postWithKey(api, "/hub", hubBody, key);
    expect(retry.headers.get("idempotency-replayed")).toBe("true");
  });

  it("answers 409 idem-409 while a request with the key is in flight, and takes over a record whose in-progress time ran out", async () => {
    // Prepare: a finished record, put back in progress as if its request were still running.
    const { api, organizationId } = newTenant();
    const key = randomUUID();
    expect((await postWithKey(api, "/hub", hubBody, key)).status).toBe(201);
    const Key = recordKey(organizationId, "createHub", key);
    const markInProgress = (until: number) =>
      documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key,
          UpdateExpression: "SET #status = :inProgress, in_progress_expiration = :until REMOVE #data",
          ExpressionAttributeNames: { "#status": "status", "#data": "data" },
          ExpressionAttributeValues: { ":inProgress": "INPROGRESS", ":until": until },
          ConditionExpression: "attribute_exists(PK)",
        }),
      );
    await markInProgress(Date.now() + 60_000);
    // Act + Assess: in flight
    const inFlight = await postWithKey(api, "/hub", hubBody, key);
    expect(inFlight.status).toBe(409);
    expect(inFlight.body).toMatchObject({ status: false, failedCode: "idem-409" });
    expect(await hubNames(api)).toEqual([hubBody.name]);
    // A crashed invocation's record (in-progress time over) no longer blocks: the request runs.
    await markInProgress(Date.now() - 1_000);
    const takenOver = await postWithKey(api, "/hub", hubBody, key);
    expect(takenOver.status).toBe(201);
    expect(takenOver.headers.get("idempotency-replayed")).toBeNull();
  });

  it("stores the record in the organization's partition with a 24-hour TTL", async () => {
    const { api, organizationId } = newTenant();
    const key = randomUUID();
    expect((await postWithKey(api, "/hub", hubBody, key)).status).toBe(201);
    const { Item } = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: recordKey(organizationId, "createHub", key), ConsistentRead: true }),
    );
    expect(Item?.status).toBe("COMPLETED");
    const hoursLeft = (Number(Item?.expiresAt) - Date.now() / 1000) / 3600;
    expect(hoursLeft).toBeGreaterThan(23.9);
    expect(hoursLeft).toBeLessThanOrEqual(24.001); // Powertools rounds the expiry to the nearest second
  });

  it("scopes keys per organization and per operation", async () => {
    const one = newTenant();
    const other = newTenant();
    const key = randomUUID();
    const a = await postWithKey(one.api, "/hub", hubBody, key);
    const b = await postWithKey(other.api, "/hub", hubBody, key);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get("idempotency-replayed")).toBeNull();
    expect(b.body.data._id).not.toBe(a.body.data._id);
    // The same key on another operation of the same organization is another record.
    const vehicle = await postWithKey(one.api, "/vehicle", { name: "Van", hubId: a.body.data._id }, key);
    expect(vehicle.status).toBe(201);
    expect(vehicle.headers.get("idempotency-replayed")).toBeNull();
  });

  it("creates every time without the header, as before", async () => {
    const { api } = newTenant();
    expect((await api.post("/hub", hubBody)).status).toBe(201);
    expect((await api.post("/hub", hubBody)).status).toBe(201);
    expect(await hubNames(api)).toHaveLength(2);
  });

  it.each([
    ["empty", ""],
    ["with a space", "a b"],
    ["longer than 255 characters", "k".repeat(256)],
    ["non-ASCII", "clé"],
  ])("refuses a key %s with 400 idem-400", async (_label, key) => {
    const { api } = newTenant();
    const response = await postWithKey(api, "/hub", hubBody, key);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: false, failedCode: "idem-400", errors: [{ field: "Idempotency-Key" }] });
    expect(await hubNames(api)).toEqual([]);
  });
});
