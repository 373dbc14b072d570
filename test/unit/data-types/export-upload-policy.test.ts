import { beforeAll, describe, expect, it, vi } from "vitest";
import { EXPORT_CONTENT_TYPE } from "#shared/domain/data-types/legacy-import";
import type { ImportSource } from "#shared/domain/data-types/import-service";

/**
 * The presigned POST of an export upload, decoded: the policy S3 enforces (s3rver ignores it, so the
 * HTTP suite cannot see a refusal). Signing needs credentials and a region only, no network.
 */
describe("export upload: the presigned POST policy", () => {
  let source: ImportSource;
  beforeAll(async () => {
    vi.stubEnv("AWS_REGION", "eu-west-1");
    vi.stubEnv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "secret");
    vi.stubEnv("AWS_SESSION_TOKEN", "");
    vi.stubEnv("AWS_ENDPOINT_URL", "");
    vi.stubEnv("AWS_ENDPOINT_URL_S3", "");
    vi.stubEnv("BUCKET_NAME", "files-bucket");
    // Virtual-hosted addressing, as on AWS (the local stack sets path style for its emulator).
    vi.stubEnv("S3_FORCE_PATH_STYLE", "false");
    vi.stubEnv("PRESIGN_TTL_SECONDS", "600");
    ({ s3ImportSource: source } = await import("#shared/blob/import-source"));
  });

  const decodedPolicy = (fields: Record<string, string>) =>
    JSON.parse(Buffer.from(fields.Policy as string, "base64").toString("utf8")) as { expiration: string; conditions: unknown[] };

  it("bounds the size from 1 byte to the plan's maximum, fixes the content type and the kind-first key, and expires with PRESIGN_TTL_SECONDS", async () => {
    const before = Date.now();
    const target = await source.uploadTarget("org.acme", "0123456789abcdef01234567", {
      maxBytes: 10 * 1024 * 1024,
      contentType: EXPORT_CONTENT_TYPE,
    });
    expect(target.expiresInSeconds).toBe(600);
    expect(target.url).toMatch(/^https:\/\/files-bucket\.s3\.eu-west-1\.amazonaws\.com\/?$/);
    expect(target.fields).toMatchObject({
      key: "imports/org.acme/0123456789abcdef01234567.jsonl",
      "Content-Type": EXPORT_CONTENT_TYPE,
      "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
    });
    expect(target.fields["X-Amz-Signature"]).toMatch(/^[0-9a-f]{64}$/);

    const policy = decodedPolicy(target.fields);
    expect(policy.conditions).toContainEqual(["content-length-range", 1, 10 * 1024 * 1024]);
    expect(policy.conditions).toContainEqual({ "Content-Type": EXPORT_CONTENT_TYPE });
    expect(policy.conditions).toContainEqual({ key: "imports/org.acme/0123456789abcdef01234567.jsonl" });
    expect(policy.conditions).toContainEqual({ bucket: "files-bucket" });
    // Nothing looser: no starts-with condition would let the form choose another key or type.
    expect(policy.conditions.filter((condition) => Array.isArray(condition) && condition[0] === "starts-with")).toEqual([]);
    const expiresAt = Date.parse(policy.expiration);
    // The policy's expiration has whole seconds.
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 600_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 600_000);
  });

  it("signs each plan's own maximum", async () => {
    const target = await source.uploadTarget("org.acme", "0123456789abcdef01234568", { maxBytes: 1024, contentType: EXPORT_CONTENT_TYPE });
    expect(decodedPolicy(target.fields).conditions).toContainEqual(["content-length-range", 1, 1024]);
  });
});
