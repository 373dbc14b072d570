import { randomUUID } from "node:crypto";
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { createPresignedPost } from "@aws-sdk/s3-presigned-post";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { describe, expect, it } from "vitest";
import { bucketName, s3Client } from "#shared/blob/s3";
import { objectKeys } from "#shared/store/keys";
import { s3Refusal } from "#test/support/refusals";

/**
 * The local S3 (s3rver behind local/s3-front.ts, started by the suite's local stack as by `npm start`)
 * authorizes as S3 does: a browser form POST only within its signed policy, no anonymous reads or
 * writes, SigV4 signatures and presigned URLs checked. Each refusal leaves nothing stored.
 */
const exportType = "application/x-ndjson";

async function policyFor(key: string, options: { conditions?: unknown[]; expires?: number; fields?: Record<string, string> } = {}) {
  return createPresignedPost(s3Client(), {
    Bucket: bucketName(),
    Key: key,
    Fields: { "Content-Type": exportType, ...options.fields },
    Conditions: (options.conditions ?? [["content-length-range", 1, 64], { "Content-Type": exportType }]) as never,
    Expires: options.expires ?? 300,
  });
}

/** The form a browser sends: the fields (overridden or left out as asked), then the file last. */
async function postForm(
  target: { url: string; fields: Record<string, string> },
  content: string,
  change: { fields?: Record<string, string>; omit?: string[] } = {},
): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries({ ...target.fields, ...change.fields }))
    if (!change.omit?.includes(name)) form.append(name, value);
  form.append("file", new Blob([content], { type: exportType }), "export.jsonl");
  return fetch(target.url, { method: "POST", body: form });
}

async function stored(key: string): Promise<boolean> {
  try {
    await s3Client().send(new HeadObjectCommand({ Bucket: bucketName(), Key: key }));
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === "NotFound") return false;
    throw error;
  }
}

const exportKey = (organizationId = `org-${randomUUID()}`) =>
  objectKeys.legacyExport(organizationId, randomUUID().replace(/-/g, "").slice(0, 24));
const objectUrl = (key: string) => `${process.env.AWS_ENDPOINT_URL_S3}/${bucketName()}/${key.split("/").map(encodeURIComponent).join("/")}`;

describe("Local S3: browser form POST within its policy (sigv4-HTTPPOSTConstructPolicy)", () => {
  it("stores a form that meets its policy, with the policy's content type", async () => {
    const key = exportKey();
    const answer = await postForm(await policyFor(key), '{"a":1}\n');
    expect(answer.status).toBe(204);
    const object = await s3Client().send(new GetObjectCommand({ Bucket: bucketName(), Key: key }));
    expect(object.ContentType).toBe(exportType);
    expect(await object.Body?.transformToString()).toBe('{"a":1}\n');
  });

  it("refuses another key than the signed one (another organization's prefix): 403 AccessDenied, nothing stored", async () => {
    const key = exportKey();
    const elsewhere = exportKey();
    expect(await s3Refusal(await postForm(await policyFor(key), "x", { fields: { key: elsewhere } }))).toEqual({
      status: 403,
      code: "AccessDenied",
    });
    expect(await stored(elsewhere)).toBe(false);
    expect(await stored(key)).toBe(false);
  });

  it("holds a starts-with condition: a key under the prefix is stored, one outside it refused", async () => {
    const prefix = `imports/org-${randomUUID()}/`;
    const target = await policyFor(`${prefix}first`, {
      conditions: [["starts-with", "$key", prefix], { "Content-Type": exportType }],
    });
    // createPresignedPost also adds the exact key; a policy of its own states only the prefix.
    expect((await postForm(target, "x", { fields: { key: `${prefix}first` } })).status).toBe(204);
    const outside = `imports/org-${randomUUID()}/first`;
    expect((await s3Refusal(await postForm(target, "x", { fields: { key: outside } }))).code).toBe("AccessDenied");
    expect(await stored(outside)).toBe(false);
  });

  it("refuses another content type than the policy's: 403, nothing stored", async () => {
    const key = exportKey();
    expect(await s3Refusal(await postForm(await policyFor(key), "x", { fields: { "Content-Type": "text/html" } }))).toEqual({
      status: 403,
      code: "AccessDenied",
    });
    expect(await stored(key)).toBe(false);
  });

  it("refuses a file outside content-length-range: 400 EntityTooLarge above, EntityTooSmall below (empty)", async () => {
    const key = exportKey();
    const target = await policyFor(key);
    expect(await s3Refusal(await postForm(target, "x".repeat(65)))).toEqual({ status: 400, code: "EntityTooLarge" });
    expect(await s3Refusal(await postForm(target, ""))).toEqual({ status: 400, code: "EntityTooSmall" });
    expect(await stored(key)).toBe(false);
    expect((await postForm(target, "x".repeat(64))).status).toBe(204);
  });

  it("refuses an expired policy: 403, nothing stored", async () => {
    const key = exportKey();
    const target = await policyFor(key, { expires: -60 });
    expect(JSON.parse(Buffer.from(target.fields.Policy as string, "base64").toString()).expiration < new Date().toISOString()).toBe(true);
    expect(await s3Refusal(await postForm(target, "x"))).toEqual({ status: 403, code: "AccessDenied" });
    expect(await stored(key)).toBe(false);
  });

  it("refuses an altered signature, an altered policy and a form without policy or signature", async () => {
    const key = exportKey();
    const target = await policyFor(key);
    const signature = target.fields["X-Amz-Signature"] as string;
    const altered = `${signature.slice(0, -1)}${signature.endsWith("0") ? "1" : "0"}`;
    expect(await s3Refusal(await postForm(target, "x", { fields: { "X-Amz-Signature": altered } }))).toEqual({
      status: 403,
      code: "SignatureDoesNotMatch",
    });
    // The same signature over a policy that lets anything in.
    const widened = Buffer.from(JSON.stringify({ expiration: new Date(Date.now() + 60_000).toISOString(), conditions: [] })).toString(
      "base64",
    );
    expect(await s3Refusal(await postForm(target, "x", { fields: { Policy: widened } }))).toEqual({
      status: 403,
      code: "SignatureDoesNotMatch",
    });
    // A policy signed with another secret (the signature is the policy's HMAC with the signing key).
    const foreign = await createPresignedPost(
      new S3Client({
        region: "us-east-1",
        endpoint: process.env.AWS_ENDPOINT_URL_S3,
        forcePathStyle: true,
        credentials: { accessKeyId: "S3RVER", secretAccessKey: "guess" },
      }),
      { Bucket: bucketName(), Key: key, Fields: { "Content-Type": exportType }, Conditions: [{ "Content-Type": exportType }] },
    );
    expect(await s3Refusal(await postForm(foreign, "x"))).toEqual({ status: 403, code: "SignatureDoesNotMatch" });
    expect(await s3Refusal(await postForm(target, "x", { omit: ["X-Amz-Signature"] }))).toEqual({ status: 400, code: "InvalidArgument" });
    expect(await s3Refusal(await postForm(target, "x", { omit: ["Policy", "X-Amz-Signature"] }))).toEqual({
      status: 403,
      code: "AccessDenied",
    });
    expect(await stored(key)).toBe(false);
  });

  it("refuses a form field the policy does not name, and another bucket's name", async () => {
    const key = exportKey();
    const target = await policyFor(key);
    expect(await s3Refusal(await postForm(target, "x", { fields: { "x-amz-meta-owner": "me" } }))).toEqual({
      status: 403,
      code: "AccessDenied",
    });
    expect(await s3Refusal(await postForm(target, "x", { fields: { bucket: "another-bucket" } }))).toEqual({
      status: 403,
      code: "AccessDenied",
    });
    expect(await stored(key)).toBe(false);
    // Fields named x-ignore-* are outside the policy by definition.
    expect((await postForm(target, "x", { fields: { "x-ignore-trace": "1" } })).status).toBe(204);
  });
});

describe("Local S3: no anonymous access; SigV4 requests and presigned URLs checked", () => {
  it("refuses an anonymous GET, HEAD and PUT of another organization's object with 403", async () => {
    const key = exportKey();
    await s3Client().send(new PutObjectCommand({ Bucket: bucketName(), Key: key, Body: "secret", ContentType: exportType }));
    expect(await s3Refusal(await fetch(objectUrl(key)))).toEqual({ status: 403, code: "AccessDenied" });
    expect((await fetch(objectUrl(key), { method: "HEAD" })).status).toBe(403);
    expect(await s3Refusal(await fetch(objectUrl(key), { method: "PUT", body: "overwritten" }))).toEqual({
      status: 403,
      code: "AccessDenied",
    });
    expect(await s3Refusal(await fetch(objectUrl(key), { method: "DELETE" }))).toEqual({ status: 403, code: "AccessDenied" });
    expect(await s3Refusal(await fetch(`${process.env.AWS_ENDPOINT_URL_S3}/${bucketName()}?list-type=2`))).toEqual({
      status: 403,
      code: "AccessDenied",
    });
    const object = await s3Client().send(new GetObjectCommand({ Bucket: bucketName(), Key: key }));
    expect(await object.Body?.transformToString()).toBe("secret");
  });

  it("refuses an SDK request signed with another secret (SignatureDoesNotMatch) or another key id (InvalidAccessKeyId)", async () => {
    const key = exportKey();
    const client = (accessKeyId: string, secretAccessKey: string) =>
      new S3Client({
        region: "us-east-1",
        endpoint: process.env.AWS_ENDPOINT_URL_S3,
        forcePathStyle: true,
        credentials: { accessKeyId, secretAccessKey },
      });
    await expect(client("S3RVER", "guess").send(new PutObjectCommand({ Bucket: bucketName(), Key: key, Body: "x" }))).rejects.toMatchObject(
      {
        name: "SignatureDoesNotMatch",
        $metadata: { httpStatusCode: 403 },
      },
    );
    await expect(
      client("SOMEONE", "S3RVER").send(new PutObjectCommand({ Bucket: bucketName(), Key: key, Body: "x" })),
    ).rejects.toMatchObject({
      name: "InvalidAccessKeyId",
    });
    expect(await stored(key)).toBe(false);
  });

  it("serves a presigned GET; refuses it for another key, altered, or expired", async () => {
    const key = exportKey();
    const other = exportKey();
    for (const k of [key, other]) await s3Client().send(new PutObjectCommand({ Bucket: bucketName(), Key: k, Body: `body of ${k}` }));
    const url = await getSignedUrl(s3Client(), new GetObjectCommand({ Bucket: bucketName(), Key: key }), { expiresIn: 60 });
    const answer = await fetch(url);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe(`body of ${key}`);

    const elsewhere = new URL(url);
    elsewhere.pathname = new URL(objectUrl(other)).pathname;
    expect(await s3Refusal(await fetch(elsewhere))).toEqual({ status: 403, code: "SignatureDoesNotMatch" });
    const altered = new URL(url);
    altered.searchParams.set("X-Amz-Signature", "0".repeat(64));
    expect(await s3Refusal(await fetch(altered))).toEqual({ status: 403, code: "SignatureDoesNotMatch" });
    const expired = await getSignedUrl(s3Client(), new GetObjectCommand({ Bucket: bucketName(), Key: key }), {
      expiresIn: 60,
      signingDate: new Date(Date.now() - 120_000),
    });
    expect(await s3Refusal(await fetch(expired))).toEqual({ status: 403, code: "AccessDenied" });
  });
});
