import { createHubService } from "#shared/domain/hubs/service";
import { dynamoHubStore } from "#shared/store/hub-store";

/** Composition root of the hub area: the domain service over its DynamoDB store. */
export const hubService = createHubService(dynamoHubStore);
