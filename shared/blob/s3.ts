import { S3Client } from "@aws-sdk/client-s3";
import { appConfig } from "#shared/config/env";

/**
 * Module-scope S3 client. Endpoint from `AWS_ENDPOINT_URL(_S3)`; path-style addressing for the
 * local emulator and LocalStack. Checksums only when an operation requires them, so streamed
 * uploads reach s3rver without aws-chunked framing.
 */
let client: S3Client | undefined;

export function s3Client(): S3Client {
  client ??= new S3Client({
    forcePathStyle: appConfig().S3_FORCE_PATH_STYLE === "true",
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return client;
}

export { bucketName } from "#shared/blob/s3-sdk";
