import type { S3Client } from "@aws-sdk/client-s3";
import { appConfig } from "#shared/config/env";

/**
 * The S3 SDK (client, commands, presigner) for request paths, loaded on the first call that
 * touches S3 rather than at module load: it is ~200 KiB of every bundle that stores certificates,
 * imports or routing results, and most requests of those functions never reach S3. esbuild still
 * bundles it (a lazy wrapper in the single-file bundle); only its evaluation waits.
 * The client is the one of #shared/blob/s3 (jobs and tests import that module directly).
 */
export async function s3Sdk(): Promise<{ client: S3Client; sdk: typeof import("@aws-sdk/client-s3") }> {
  const [{ s3Client }, sdk] = await Promise.all([import("#shared/blob/s3"), import("@aws-sdk/client-s3")]);
  return { client: s3Client(), sdk };
}

/** `getSignedUrl`, loaded like s3Sdk. */
export async function s3Presigner(): Promise<typeof import("@aws-sdk/s3-request-presigner")> {
  return import("@aws-sdk/s3-request-presigner");
}

/** `createPresignedPost`, loaded like s3Sdk. */
export async function s3PresignedPost(): Promise<typeof import("@aws-sdk/s3-presigned-post")> {
  return import("@aws-sdk/s3-presigned-post");
}

export function bucketName(): string {
  return appConfig().BUCKET_NAME;
}
