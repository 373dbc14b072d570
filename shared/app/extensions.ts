import { createCustomValues, createEntityExtensionService } from "#shared/domain/extensions/service";
import { dynamoEntityExtensionStore } from "#shared/store/extension-store";
import { entityExistence } from "#shared/store/entity-existence";
import { findExtensionType } from "#shared/store/extension-type-store";
import { dynamoRecordStore } from "#shared/store/record-store";

/**
 * Composition root of entity custom values (docs/api/extensions.md): the organization's extension data
 * type per entity, and the records' relation-target lookups for belongsTo/belongsToMany fields.
 */
export const customValues = createCustomValues({
  extensionTypes: { find: findExtensionType },
  relations: {
    store: dynamoRecordStore,
    entities: entityExistence,
  },
});

/** `PUT/GET /extension/{entity}/{entityId}` (user, role, flow). */
export const entityExtensionService = createEntityExtensionService({ custom: customValues, store: dynamoEntityExtensionStore });
