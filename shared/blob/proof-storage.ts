import type { PresignedPostOptions } from "@aws-sdk/s3-presigned-post";
import { appConfig } from "#shared/config/env";
import type { ProofKind, ProofStorage } from "#shared/domain/visits/proofs";
import { bucketName, s3PresignedPost, s3Presigner, s3Sdk } from "#shared/blob/s3-sdk";
import { objectKeys } from "#shared/store/keys";
import { logger } from "#shared/observability/powertools";

/** The object metadata (`x-amz-meta-…`) that carries a proof's kind, fixed by the upload's policy. */
export const PROOF_KIND_METADATA = "proof-kind";
const kindField = `x-amz-meta-${PROOF_KIND_METADATA}`;

const isMissing = (error: unknown) => error instanceof Error && (error.name === "NotFound" || error.name === "NoSuchKey");
/** HeadObject's 403: S3 answers it for a missing key when s3:ListBucket does not apply to the request. */
const isForbidden = (error: unknown) =>
  error instanceof Error && (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 403;

/**
 * Proofs of delivery in the private bucket under `proofs/<organization>/<visit>/<proofId>`, uploaded
 * through a presigned POST whose policy fixes the key, the content type and the kind, and bounds the
 * size (a presigned PUT can bound neither).
 */
export const s3ProofStorage: ProofStorage = {
  async uploadTarget(organizationId, visitId, proofId, rules) {
    const expiresInSeconds = appConfig().PRESIGN_TTL_SECONDS;
    const [{ client }, { createPresignedPost }] = await Promise.all([s3Sdk(), s3PresignedPost()]);
    const { url, fields } = await createPresignedPost(client, {
      Bucket: bucketName(),
      Key: objectKeys.visitProof(organizationId, visitId, proofId),
      Fields: { "Content-Type": rules.contentType, [kindField]: rules.kind },
      Conditions: proofUploadConditions(rules),
      Expires: expiresInSeconds,
    });
    return { url, fields, expiresInSeconds };
  },

  async describe(organizationId, visitId, proofId) {
    const { client, sdk } = await s3Sdk();
    try {
      const output = await client.send(
        new sdk.HeadObjectCommand({ Bucket: bucketName(), Key: objectKeys.visitProof(organizationId, visitId, proofId) }),
      );
      return { kind: output.Metadata?.[PROOF_KIND_METADATA], contentType: output.ContentType, sizeBytes: output.ContentLength ?? 0 };
    } catch (error) {
      if (isMissing(error)) return undefined;
      // S3 tells a missing key (404) from a forbidden one (403) only to callers s3:ListBucket allows; the
      // grant is conditioned on s3:prefix proofs/*, and if S3 does not apply that condition to this choice
      // the missing proof answers 403. The function may read every proof key it builds, so a 403 here
      // means "not there": the client gets its 400, and the log says why.
      if (isForbidden(error)) {
        logger.warn("proof HeadObject answered 403: treated as missing (docs/api/execution.md, Proof of delivery)", { proofId });
        return undefined;
      }
      throw error;
    }
  },

  async downloadUrl(organizationId, visitId, proofId, expiresInSeconds) {
    const [{ client, sdk }, { getSignedUrl }] = await Promise.all([s3Sdk(), s3Presigner()]);
    return getSignedUrl(
      client,
      new sdk.GetObjectCommand({ Bucket: bucketName(), Key: objectKeys.visitProof(organizationId, visitId, proofId) }),
      { expiresIn: expiresInSeconds },
    );
  },
};

/**
 * The POST policy's own conditions (createPresignedPost adds the bucket, the exact key and the
 * signing fields): 1 byte up to the declared size, exactly the content type, exactly the kind.
 */
export function proofUploadConditions(rules: {
  kind: ProofKind;
  contentType: string;
  maxBytes: number;
}): NonNullable<PresignedPostOptions["Conditions"]> {
  return [["content-length-range", 1, rules.maxBytes], { "Content-Type": rules.contentType }, { [kindField]: rules.kind }];
}
