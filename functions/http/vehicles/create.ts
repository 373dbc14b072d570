import { vehicleService } from "#shared/app/vehicles";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { created } from "#shared/http/responses";
import { vehicleRoutes } from "./routes.ts";

export const handler = httpHandler(
  vehicleRoutes.create,
  async ({ caller, body }) => created("Vehicle has been added successfully.", await vehicleService.create(caller, body)),
  { answerIdempotently },
);
