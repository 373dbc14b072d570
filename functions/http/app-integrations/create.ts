import { appIntegrationService } from "#shared/app/app-integrations";
import type { Caller } from "#shared/domain/caller";
import { NotFoundError } from "#shared/domain/errors";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently, type SecretFreeAnswer } from "#shared/http/idempotency";
import { parseMultipartBody } from "#shared/http/multipart";
import { success } from "#shared/http/responses";
import { appIntegrationRoutes } from "./routes.ts";

type Answer = { data?: { _id?: string; azureCert?: string } };

/**
 * `azureCert` in the answer is a presigned URL (a bearer secret for its lifetime): the stored
 * answer of an Idempotency-Key leaves it out, and a replay presigns a fresh one for the same caller
 * (none when the integration was deleted meanwhile).
 */
const withoutCertificateUrl = (caller: Caller): SecretFreeAnswer => ({
  strip: (body) => {
    const answer = body as Answer;
    const { azureCert: _secret, ...data } = answer.data ?? {};
    return { ...answer, data };
  },
  restore: async (body) => {
    const answer = body as Answer;
    try {
      const current = await appIntegrationService.get(caller, answer.data?._id ?? "");
      return { ...answer, data: { ...answer.data, azureCert: current.azureCert } };
    } catch (error) {
      if (error instanceof NotFoundError) return answer;
      throw error;
    }
  },
});

export const handler = httpHandler(
  appIntegrationRoutes.create,
  async ({ caller, body }) =>
    success(201, "Integration has been added successfully.", { code: 201, data: await appIntegrationService.create(caller, body) }),
  { readMultipart: parseMultipartBody, answerIdempotently, secretFree: withoutCertificateUrl },
);
