import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { appConfig } from "#shared/config/env";
import { markVisitDispatched } from "#shared/app/visits";
import { PROOF_MAX_BYTES } from "#shared/domain/visits/proofs";
import { objectKeys } from "#shared/store/keys";
import { postExport as postForm } from "#test/support/export-upload";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { expectRefused, refusal, s3Refusal } from "#test/support/refusals";

/**
 * Proof of delivery through the local gateway and the S3 emulator (s3rver, which does not enforce a
 * POST policy yet: these tests assert the policy document the API signs, and the server-side
 * HeadObject check of what was uploaded; refusals by the policy itself are the emulator's tests).
 */
async function dispatchedVisit(requirements?: Record<string, boolean>) {
  const tenant = newTenant({ sub: "dispatcher-1" });
  const { api, organizationId } = tenant;
  const hub = (await api.post("/hub", { name: "Depot", address: "Jl. 1", lat: -6.2, lng: 106.8 })).body.data._id as string;
  const vehicle = (
    await api.post("/vehicle", {
      name: "Van",
      hubId: hub,
      assignee: "driver-1",
      workingTime: { startTime: "00:00", endTime: "23:59", multiday: 0 },
    })
  ).body.data._id as string;
  const created = await api.post("/visit", {
    hubId: hub,
    name: "Stop 1",
    coordinate: { lat: -6.21, lng: 106.81 },
    ...(requirements ? { requirements } : {}),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.data._id as string;
  const dispatch = {
    assignedVehicleId: vehicle,
    routingResultId: "r1",
    routePlannedOrder: 1,
    eta: "2026-12-01 09:10",
    etd: "2026-12-01 09:25",
  };
  expect(
    await markVisitDispatched(organizationId, hub, id, dispatch, "2026-12-01 08:00:00", {
      source: "dispatcher",
      userId: "dispatcher-1",
      at: "2026-12-01T08:00:00Z",
    }),
  ).toBe(true);
  const driver = apiClient(tokenFor({ organizationId, sub: "driver-1", permissions: ["edit/visit-progress", "view/visit"] }));
  return { ...tenant, hub, id, driver };
}

const askUpload = (api: ApiClient, visitId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  api.request("POST", `/visit/${visitId}/proofs`, { body, headers });
const progress = (api: ApiClient, visitId: string, body: Record<string, unknown>) =>
  api.request("POST", `/visit/${visitId}/progress`, { body });

const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, ...new TextEncoder().encode("a tiny photo"), 0xff, 0xd9]);
const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, ...new TextEncoder().encode("a signature")]);

/** Asks for an upload form and posts `bytes` through it (the emulator answers 204). */
async function uploadProof(api: ApiClient, visitId: string, kind: string, contentType: string, bytes: Uint8Array) {
  const target = await askUpload(api, visitId, { kind, contentType, sizeBytes: bytes.length });
  expect(target.status, JSON.stringify(target.body)).toBe(201);
  const posted = await postForm(target.body.data, bytes);
  expect(posted.status).toBe(204);
  return target.body.data.proofId as string;
}

const decodedPolicy = (fields: Record<string, string>) =>
  JSON.parse(Buffer.from(fields.Policy as string, "base64").toString("utf8")) as { expiration: string; conditions: unknown[] };

describe("Proof of delivery", () => {
  it("stores a visit's requirements (each false unless sent) through create, patch and batch", async () => {
    const { api, hub } = await dispatchedVisit();
    const plain = await api.post("/visit", { hubId: hub, name: "Plain", coordinate: { lat: -6.2, lng: 106.8 } });
    expect(plain.body.data).toMatchObject({ requirements: { photo: false, signature: false, notes: false }, proofs: [] });
    const some = await api.post("/visit", {
      hubId: hub,
      name: "Signed",
      coordinate: { lat: -6.2, lng: 106.8 },
      requirements: { signature: true },
    });
    expect(some.body.data.requirements).toEqual({ photo: false, signature: true, notes: false });
    const patched = await api.patch(`/visit/${some.body.data._id}`, { requirements: { photo: true, notes: true } });
    expect(patched.status).toBe(200);
    expect((await api.get(`/visit/${some.body.data._id}`)).body.data.requirements).toEqual({ photo: true, signature: false, notes: true });
    const batch = await api.post("/visits/batch", {
      visits: [{ hubId: hub, name: "B", coordinate: { lat: -6.2, lng: 106.8 }, requirements: { photo: true } }],
    });
    expect(batch.body.data[0].data.requirements).toEqual({ photo: true, signature: false, notes: false });
    const visitPath = `/visit/${some.body.data._id}`;
    const bad = await expectRefused(
      api,
      { method: "PATCH", path: visitPath, body: { requirements: { photo: "yes" } } },
      { status: 400, failedCode: "sys-400", unchanged: visitPath },
    );
    expect(bad.body.errors[0].field).toBe("requirements.photo");
    await expectRefused(
      api,
      { method: "PATCH", path: visitPath, body: { requirements: { stamp: true } } },
      { status: 400, failedCode: "sys-400", unchanged: visitPath },
    );
    // Server-set: a body's proofs are ignored like the dispatch fields.
    const ignored = await api.patch(`/visit/${some.body.data._id}`, { name: "Renamed", proofs: [{ proofId: "x" }] });
    expect(ignored.status).toBe(200);
    expect(ignored.body.data.proofs).toEqual([]);
  });

  it("signs an upload form whose policy fixes the key under the organization and visit, the type and kind, and bounds the size", async () => {
    const { driver, id, organizationId } = await dispatchedVisit();
    const before = Date.now();
    const answer = await askUpload(driver, id, { kind: "photo", contentType: "image/jpeg", sizeBytes: 2_000_000 });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const data = answer.body.data;
    expect(data).toMatchObject({
      proofId: expect.stringMatching(/^[0-9a-f]{24}$/),
      visitId: id,
      kind: "photo",
      contentType: "image/jpeg",
      maxBytes: 2_000_000,
      method: "POST",
      expiresInSeconds: expect.any(Number),
    });
    const key = objectKeys.visitProof(organizationId, id, data.proofId);
    expect(key).toBe(`proofs/${encodeURIComponent(organizationId)}/${id}/${data.proofId}`);
    expect(data.fields).toMatchObject({ key, "Content-Type": "image/jpeg", "x-amz-meta-proof-kind": "photo" });
    const policy = decodedPolicy(data.fields);
    expect(policy.conditions).toContainEqual(["content-length-range", 1, 2_000_000]);
    expect(policy.conditions).toContainEqual({ "Content-Type": "image/jpeg" });
    expect(policy.conditions).toContainEqual({ "x-amz-meta-proof-kind": "photo" });
    expect(policy.conditions).toContainEqual({ key });
    // Nothing looser: no starts-with would let the form choose another key, type or kind.
    expect(policy.conditions.filter((condition) => Array.isArray(condition) && condition[0] === "starts-with")).toEqual([]);
    // The signer's clock is the SDK client's (Date.now() plus its systemClockOffset, which S3's whole-second Date header can set): 1 s either way.
    expect(Date.parse(policy.expiration)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000 + data.expiresInSeconds * 1000);
    expect(Date.parse(policy.expiration)).toBeLessThanOrEqual(Date.now() + 1000 + data.expiresInSeconds * 1000);
  });

  it("refuses a bad request for a form with 400: a type its kind does not take, no size, more than 10 MB, an unknown kind", async () => {
    const { driver, id } = await dispatchedVisit();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ kind: "photo", contentType: "application/pdf", sizeBytes: 10 }, "contentType"],
      [{ kind: "signature", contentType: "image/gif", sizeBytes: 10 }, "contentType"],
      [{ kind: "photo", contentType: "image/png", sizeBytes: 0 }, "sizeBytes"],
      [{ kind: "photo", contentType: "image/png", sizeBytes: PROOF_MAX_BYTES + 1 }, "sizeBytes"],
      [{ kind: "photo", contentType: "image/png", sizeBytes: 1.5 }, "sizeBytes"],
      [{ kind: "selfie", contentType: "image/png", sizeBytes: 10 }, "kind"],
      [{ kind: "photo", contentType: "image/png" }, "sizeBytes"],
      [{ kind: "photo", contentType: "image/png", sizeBytes: 10, key: "proofs/other" }, "key"],
    ];
    for (const [body, field] of cases) {
      const refused = await askUpload(driver, id, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.status).toBe(false);
      expect(
        refused.body.errors.map((error: { field: string }) => error.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    // A document may be a PDF.
    expect((await askUpload(driver, id, { kind: "document", contentType: "application/pdf", sizeBytes: PROOF_MAX_BYTES })).status).toBe(
      201,
    );
  });

  it("completes a visit that requires a photo once one is uploaded and named; without it 400 naming photo, and nothing changes", async () => {
    const { driver, id, api } = await dispatchedVisit({ photo: true });
    expect((await progress(driver, id, { action: "arrive" })).status).toBe(200);

    const refused = await progress(driver, id, { action: "complete" });
    expect(refusal(refused)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(refused.body.errors).toEqual([{ field: "requirements.photo", message: expect.stringContaining("photo") }]);
    const asked = await askUpload(driver, id, { kind: "photo", contentType: "image/jpeg", sizeBytes: jpeg.length });
    // Named before its file was uploaded: 400 on proofIds.
    const early = await progress(driver, id, { action: "complete", proofIds: [asked.body.data.proofId] });
    expect(refusal(early)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(early.body.errors[0]).toMatchObject({ field: "proofIds", message: expect.stringContaining(asked.body.data.proofId) });
    const unchanged = (await api.get(`/visit/${id}`)).body.data;
    expect(unchanged).toMatchObject({ status: "ARRIVED", proofs: [] });
    expect((await api.get(`/visit/${id}/history`)).body.data).toHaveLength(1);

    expect((await postForm(asked.body.data, jpeg)).status).toBe(204);
    const proofId = asked.body.data.proofId as string;
    const done = await progress(driver, id, { action: "complete", proofIds: [proofId] });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.data).toMatchObject({
      status: "DONE",
      proofs: [{ proofId, kind: "photo", contentType: "image/jpeg", sizeBytes: jpeg.length, recordedAt: expect.any(String) }],
      lastTransition: { from: "ARRIVED", to: "DONE", proofIds: [proofId] },
    });
    const history = (await api.get(`/visit/${id}/history`)).body.data;
    expect(history.map((change: { to: string; proofIds: string[] }) => [change.to, change.proofIds])).toEqual([
      ["ARRIVED", []],
      ["DONE", [proofId]],
    ]);

    // GET proofs (view/visit) answers URLs that fetch the object.
    const viewer = apiClient(
      tokenFor({ organizationId: (await api.get(`/visit/${id}`)).body.data.organizationId, permissions: ["view/visit"] }),
    );
    const listed = await viewer.get(`/visit/${id}/proofs`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      {
        proofId,
        kind: "photo",
        contentType: "image/jpeg",
        sizeBytes: jpeg.length,
        recordedAt: expect.any(String),
        url: expect.any(String),
        expiresInSeconds: 300,
      },
    ]);
    const fetched = await fetch(listed.body.data[0].url);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get("content-type")).toBe("image/jpeg");
    expect(new Uint8Array(await fetched.arrayBuffer())).toEqual(jpeg);
  });

  it("names every unmet requirement at once (signature, notes), and counts a proof recorded by an earlier action", async () => {
    const { driver, id } = await dispatchedVisit({ photo: true, signature: true, notes: true });
    const photo = await uploadProof(driver, id, "photo", "image/png", png);
    // The photo is recorded with arrive: complete still needs the signature and notes.
    expect((await progress(driver, id, { action: "arrive", proofIds: [photo] })).body.data.proofs).toHaveLength(1);
    const refused = await progress(driver, id, { action: "complete" });
    expect(refusal(refused)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(refused.body.errors.map((error: { field: string }) => error.field)).toEqual(["requirements.signature", "requirements.notes"]);
    const signature = await uploadProof(driver, id, "signature", "image/png", png);
    const done = await progress(driver, id, { action: "complete", proofIds: [signature, signature], notes: "Signed by the porter" });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.data.proofs.map((proof: { kind: string }) => proof.kind)).toEqual(["photo", "signature"]);
    expect(done.body.data.lastTransition.proofIds).toEqual([signature]);
  });

  it("checks what was uploaded, server-side: another type than the form's, another visit's proof, a made-up id are 400 on proofIds", async () => {
    const { driver, id, api, hub, organizationId } = await dispatchedVisit();
    // S3 (and the local S3) refuses a form whose Content-Type breaks its policy; an object that got there
    // anyway (written with the bucket's own credentials) is refused at use.
    const asked = await askUpload(driver, id, { kind: "photo", contentType: "image/jpeg", sizeBytes: 20 });
    expect(await s3Refusal(await postForm(asked.body.data, jpeg, { "Content-Type": "text/html" }))).toEqual({
      status: 403,
      code: "AccessDenied",
    });
    await new S3Client({ forcePathStyle: true }).send(
      new PutObjectCommand({
        Bucket: appConfig().BUCKET_NAME,
        Key: objectKeys.visitProof(organizationId, id, asked.body.data.proofId),
        Body: jpeg,
        ContentType: "text/html",
        Metadata: { "proof-kind": "photo" },
      }),
    );
    const wrongType = await progress(driver, id, { action: "complete", proofIds: [asked.body.data.proofId] });
    expect(refusal(wrongType)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(wrongType.body.errors[0]).toMatchObject({ field: "proofIds", message: expect.stringContaining("text/html") });

    // A proof of another visit: the key is derived from this visit, so it is not found here.
    const other = await api.post("/visit", { hubId: hub, name: "Other", coordinate: { lat: -6.2, lng: 106.8 } });
    const foreignProof = await uploadProof(api, other.body.data._id, "photo", "image/jpeg", jpeg);
    const madeUp = "0123456789abcdef01234567";
    const refused = await progress(driver, id, { action: "complete", proofIds: [foreignProof, madeUp] });
    expect(refusal(refused)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(refused.body.errors.map((error: { message: string }) => error.message)).toEqual([
      expect.stringContaining(foreignProof),
      expect.stringContaining(madeUp),
    ]);
    const bad = await progress(driver, id, { action: "complete", proofIds: ["../../other-org/x"] });
    expect(refusal(bad)).toEqual({ status: 400, failedCode: "sys-400" });
    expect((await api.get(`/visit/${id}`)).body.data).toMatchObject({ status: "ASSIGNED", proofs: [] });
  });

  it("lets only the vehicle's driver or an edit/visit holder ask for a form (403 visit-403); another organization 404", async () => {
    const { driver, id, organizationId, api } = await dispatchedVisit();
    const body = { kind: "photo", contentType: "image/jpeg", sizeBytes: 100 };
    const otherDriver = apiClient(tokenFor({ organizationId, sub: "driver-2", permissions: ["edit/visit-progress", "view/visit"] }));
    const refused = await askUpload(otherDriver, id, body);
    expect(refused.status).toBe(403);
    expect(refused.body.failedCode).toBe("visit-403");
    expect((await api.get(`/visit/${id}`)).body.data).toMatchObject({ status: "ASSIGNED", proofs: [] });
    expect((await askUpload(api, id, body)).status).toBe(201);
    const viewer = apiClient(tokenFor({ organizationId, sub: "driver-1", permissions: ["view/visit"] }));
    expect(refusal(await askUpload(viewer, id, body))).toEqual({ status: 403, failedCode: "sys-035" });
    const foreign = newTenant();
    expect(refusal(await askUpload(foreign.api, id, body))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await foreign.api.get(`/visit/${id}/proofs`))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await askUpload(apiClient(undefined), id, body))).toEqual({ status: 401, failedCode: "sys-401" });
    expect((await driver.get(`/visit/${id}/proofs`)).body.data).toEqual([]);
  });

  it("replays a form request by its Idempotency-Key: the same proof, its form signed again", async () => {
    const { driver, id } = await dispatchedVisit();
    const body = { kind: "signature", contentType: "image/png", sizeBytes: png.length };
    const headers = { "Idempotency-Key": `proof-${id}` };
    const first = await askUpload(driver, id, body, headers);
    expect(first.status).toBe(201);
    const replay = await askUpload(driver, id, body, headers);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(replay.body.data).toMatchObject({ proofId: first.body.data.proofId, kind: "signature", url: first.body.data.url });
    expect(replay.body.data.fields.key).toBe(first.body.data.fields.key);
    expect(replay.body.data.fields.Policy).toEqual(expect.any(String));
    // The replayed form works.
    expect((await postForm(replay.body.data, png)).status).toBe(204);
    expect((await progress(driver, id, { action: "complete", proofIds: [first.body.data.proofId] })).status).toBe(200);
  });
});
