import { createCustomValues, createEntityExtensionService } from "#shared/domain/extensions/service";
import { dynamoEntityExtensionStore } from "#shared/store/extension-store";
import { findExtensionType } from "#shared/store/extension-type-store";
import { dynamoHubStore } from "#shared/store/hub-store";
import { dynamoRecordStore } from "#shared/store/record-store";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";

/**
 * Composition root of entity custom values (docs/extensions.md): the organization's extension data
 * type per entity, and the records' relation-target lookups for belongsTo/belongsToMany fields.
 */
export const customValues = createCustomValues({
  extensionTypes: { find: findExtensionType },
  relations: {
    store: dynamoRecordStore,
    entities: {
      hubExists: async (organizationId, hubId) => (await dynamoHubStore.find(organizationId, hubId)) !== undefined,
      vehicleExists: async (organizationId, vehicleId) => (await dynamoVehicleStore.find(organizationId, vehicleId)) !== undefined,
    },
  },
});

/** `PUT/GET /extension/{entity}/{entityId}` (user, role, flow). */
export const entityExtensionService = createEntityExtensionService({ custom: customValues, store: dynamoEntityExtensionStore });
