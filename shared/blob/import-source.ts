import { appConfig } from "#shared/config/env";
import type { ImportSource } from "#shared/domain/data-types/import-service";
import { bucketName, s3PresignedPost, s3Sdk } from "#shared/blob/s3-sdk";
import { objectKeys } from "#shared/store/keys";

const isMissing = (error: unknown) =>
  error instanceof Error && (error.name === "NoSuchKey" || error.name === "NotFound" || error.name === "NoSuchVersion");

/**
 * Exports in the private bucket under `imports/<organization>/<uploadId>.jsonl`, uploaded through a
 * presigned POST whose policy bounds the size and fixes the content type (S3 refuses a form that breaks
 * it; a presigned PUT can bound neither).
 */
export const s3ImportSource: ImportSource = {
  async uploadTarget(organizationId, uploadId, rules) {
    const expiresInSeconds = appConfig().PRESIGN_TTL_SECONDS;
    const [{ client }, { createPresignedPost }] = await Promise.all([s3Sdk(), s3PresignedPost()]);
    const { url, fields } = await createPresignedPost(client, {
      Bucket: bucketName(),
      Key: objectKeys.legacyExport(organizationId, uploadId),
      Fields: { "Content-Type": rules.contentType },
      Conditions: exportUploadConditions(rules),
      Expires: expiresInSeconds,
    });
    return { url, fields, expiresInSeconds };
  },

  async describe(organizationId, uploadId) {
    const { client, sdk } = await s3Sdk();
    try {
      const output = await client.send(
        new sdk.HeadObjectCommand({ Bucket: bucketName(), Key: objectKeys.legacyExport(organizationId, uploadId) }),
      );
      return {
        sizeBytes: output.ContentLength ?? 0,
        ...(output.ContentType ? { contentType: output.ContentType } : {}),
        ...(output.VersionId ? { versionId: output.VersionId } : {}),
      };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  },

  async read(organizationId, uploadId, range, versionId) {
    const { client, sdk } = await s3Sdk();
    try {
      const output = await client.send(
        new sdk.GetObjectCommand({
          Bucket: bucketName(),
          Key: objectKeys.legacyExport(organizationId, uploadId),
          VersionId: versionId,
          Range: `bytes=${range.offset}-${range.offset + range.length - 1}`,
        }),
      );
      const announcedSize = /\/(\d+)$/.exec(output.ContentRange ?? "")?.[1];
      if (announcedSize === "0") {
        // An empty object. S3 answers 416 InvalidRange (below); s3rver answers 206 `bytes 0-0/0` with
        // Content-Length 1 and never sends that byte, so reading the body would wait for the socket timeout.
        (output.Body as { destroy?: () => void } | undefined)?.destroy?.();
        return { bytes: Buffer.alloc(0), sizeBytes: 0, ...(output.VersionId ? { versionId: output.VersionId } : {}) };
      }
      const bytes = Buffer.from((await output.Body?.transformToByteArray()) ?? new Uint8Array());
      // `bytes a-b/size`; without a range answer the object is what was read.
      const size = Number(announcedSize ?? bytes.length);
      return { bytes, sizeBytes: size, ...(output.VersionId ? { versionId: output.VersionId } : {}) };
    } catch (error) {
      if (isMissing(error)) return undefined;
      // An empty object cannot answer a byte range.
      if (error instanceof Error && error.name === "InvalidRange") return { bytes: Buffer.alloc(0), sizeBytes: 0 };
      throw error;
    }
  },

  async remove(organizationId, uploadId, versionId) {
    const { client, sdk } = await s3Sdk();
    await client.send(
      new sdk.DeleteObjectCommand({ Bucket: bucketName(), Key: objectKeys.legacyExport(organizationId, uploadId), VersionId: versionId }),
    );
  },
};

/**
 * The POST policy's own conditions (createPresignedPost adds the bucket, the key and the signing
 * fields): 1 byte up to the plan's export size, and exactly the export content type.
 */
export function exportUploadConditions(rules: { maxBytes: number; contentType: string }) {
  return [["content-length-range", 1, rules.maxBytes] as ["content-length-range", number, number], { "Content-Type": rules.contentType }];
}
