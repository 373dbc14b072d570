import { visitProofService } from "#shared/app/visit-proofs";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { ok } from "#shared/http/responses";
import { visitRoutes } from "./routes.ts";

export const handler = httpHandler(
  visitRoutes.progress,
  async ({ caller, params, body, versions }) =>
    ok("Visit progress has been recorded.", await visitProofService.progress(caller, params.visitId, body, versions)),
  { answerIdempotently },
);
