import { appConfig } from "#shared/config/env";
import { dataTypeReader } from "#shared/app/data-types";
import { createRecordService } from "#shared/domain/records/service";
import { createExternalProvider } from "#shared/http/external-provider";
import { dynamoHubStore } from "#shared/store/hub-store";
import { dynamoRecordStore } from "#shared/store/record-store";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";

/** Composition root of the records area: the domain service over its DynamoDB store, the data type reader and the external-API fetch. */
export const recordService = createRecordService({
  store: dynamoRecordStore,
  dataTypes: dataTypeReader,
  entities: {
    hubExists: async (organizationId, hubId) => (await dynamoHubStore.find(organizationId, hubId)) !== undefined,
    vehicleExists: async (organizationId, vehicleId) => (await dynamoVehicleStore.find(organizationId, vehicleId)) !== undefined,
  },
  external: createExternalProvider({ allowLoopback: () => appConfig().ALLOW_LOOPBACK_PROVIDERS === "true" }),
});
