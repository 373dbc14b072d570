import { ValidationError } from "#shared/domain/errors";
import type { CertificateStorage } from "#shared/domain/app-integrations/service";
import { appConfig } from "#shared/config/env";
import { bucketName, s3Presigner, s3Sdk } from "#shared/blob/s3-sdk";
import { objectKeys } from "#shared/store/keys";

/** S3's limit on object key length (UTF-8 bytes). */
const MAX_OBJECT_KEY_BYTES = 1024;

/**
 * `attachment` with the original name: an ASCII fallback plus the exact UTF-8 name (RFC 6266), so
 * a browser following the URL downloads the file instead of rendering it.
 */
export function attachmentDisposition(fileName: string): string {
  const asciiFallback = fileName.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${asciiFallback}"; filename*=UTF-8''${encoded}`;
}

/** Certificate files in the private bucket, under `certificates/<organization>/<id>/<objectId>/<file name>` (the item keeps the key). */
export const s3CertificateStorage: CertificateStorage = {
  async put(organizationId, integrationId, objectId, upload) {
    const objectKey = objectKeys.appIntegrationCertificate(organizationId, integrationId, objectId, upload.fileName);
    if (Buffer.byteLength(objectKey, "utf8") > MAX_OBJECT_KEY_BYTES) throw ValidationError.single("azureCert", "file name is too long");
    const { client, sdk } = await s3Sdk();
    const output = await client.send(
      new sdk.PutObjectCommand({
        Bucket: bucketName(),
        Key: objectKey,
        Body: upload.content,
        ContentLength: upload.content.length,
        ContentType: upload.contentType,
        ContentDisposition: attachmentDisposition(upload.fileName),
        Metadata: { sha256: upload.sha256 },
      }),
    );
    return {
      objectKey,
      // Set when the bucket is versioned (it is in AWS): deleting that version removes the bytes, not just hides them.
      ...(output.VersionId ? { versionId: output.VersionId } : {}),
      fileName: upload.fileName,
      contentType: upload.contentType,
      format: upload.format,
      sizeBytes: upload.content.length,
      sha256: upload.sha256,
    };
  },

  async remove(certificate) {
    const { client, sdk } = await s3Sdk();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: bucketName(), Key: certificate.objectKey, VersionId: certificate.versionId }));
  },

  async downloadUrl(certificate) {
    const [{ client, sdk }, { getSignedUrl }] = await Promise.all([s3Sdk(), s3Presigner()]);
    return getSignedUrl(
      client,
      new sdk.GetObjectCommand({ Bucket: bucketName(), Key: certificate.objectKey, VersionId: certificate.versionId }),
      { expiresIn: appConfig().PRESIGN_TTL_SECONDS },
    );
  },
};
