import { refreshLiveRoute, visitVehicleAssignee } from "#shared/app/visits";
import { s3ProofStorage } from "#shared/blob/proof-storage";
import { createVisitService } from "#shared/domain/visits/service";
import { dynamoVisitStore } from "#shared/store/visit-store";

/**
 * The visit service with the proof objects wired in, for the routes that touch them (progress,
 * proofs): kept apart from shared/app/visits so the other visit functions do not bundle the S3 SDK.
 */
export const visitProofService = createVisitService(
  dynamoVisitStore,
  () => new Date(),
  visitVehicleAssignee,
  refreshLiveRoute,
  s3ProofStorage,
);
