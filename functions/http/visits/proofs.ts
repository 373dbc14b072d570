import { visitProofService } from "#shared/app/visit-proofs";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { visitRoutes } from "./routes.ts";

export const handler = httpHandler(visitRoutes.proofs, async ({ caller, params }) =>
  ok("Visit proofs found.", await visitProofService.proofs(caller, params.visitId)),
);
