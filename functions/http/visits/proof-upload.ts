import { visitProofService } from "#shared/app/visit-proofs";
import type { Caller } from "#shared/domain/caller";
import type { ProofUpload } from "#shared/domain/visits/proofs";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently, type SecretFreeAnswer } from "#shared/http/idempotency";
import { created } from "#shared/http/responses";
import { visitRoutes } from "./routes.ts";

type Answer = { data: ProofUpload };

/**
 * The form's signed fields are a bearer credential for its lifetime: the stored answer of an
 * Idempotency-Key keeps the proof (id, kind, type, size) without `url`/`fields`, and a replay signs
 * the same proof's form again (same key, a fresh expiry).
 */
const withoutSignature = (caller: Caller): SecretFreeAnswer => ({
  strip: (body) => {
    const answer = body as Answer;
    const { url: _url, fields: _fields, expiresInSeconds: _expires, ...data } = answer.data;
    return { ...answer, data };
  },
  restore: async (body) => {
    const answer = body as Answer;
    return { ...answer, data: await visitProofService.presignProofUpload(caller.organizationId, answer.data) };
  },
});

export const handler = httpHandler(
  visitRoutes.proofUpload,
  async ({ caller, params, body }) =>
    created(
      "POST the file to url as a form (fields, then file), then name the proofId in proofIds of POST /visit/{visitId}/progress.",
      await visitProofService.proofUpload(caller, params.visitId, body),
    ),
  { answerIdempotently, secretFree: withoutSignature },
);
