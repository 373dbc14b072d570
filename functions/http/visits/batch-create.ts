import { createVisits } from "#shared/app/visits";
import { errorToHttpResult } from "#shared/http/error-response";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { ok } from "#shared/http/responses";
import { visitRoutes } from "./routes.ts";

export const handler = httpHandler(
  visitRoutes.createBatch,
  async ({ caller, body }) => {
    const outcomes = await createVisits(caller, body.visits);
    const created = outcomes.filter((outcome) => "visit" in outcome).length;
    return ok(
      `${created} of ${outcomes.length} visits have been added.`,
      outcomes.map((outcome) => {
        if ("visit" in outcome) return { index: outcome.index, status: 201, data: outcome.visit };
        const answer = errorToHttpResult(outcome.error);
        return { index: outcome.index, status: answer.statusCode, error: answer.body };
      }),
    );
  },
  { answerIdempotently },
);
