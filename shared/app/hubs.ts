import { customValues } from "#shared/app/extensions";
import { createHubService } from "#shared/domain/hubs/service";
import { dynamoHubStore } from "#shared/store/hub-store";

/** Composition root of the hub area: the domain service over its DynamoDB store, custom values by the hub extension type. */
export const hubService = createHubService(dynamoHubStore, customValues);
