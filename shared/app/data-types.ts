import { appConfig } from "#shared/config/env";
import { createDataTypeReader, createDataTypeService } from "#shared/domain/data-types/service";
import { dynamoDataTypeStore } from "#shared/store/data-type-store";

/** Composition root of the data type area: the domain service over its DynamoDB store. */
export const dataTypeService = createDataTypeService(dynamoDataTypeStore, {
  get allowLoopbackProviders() {
    return appConfig().ALLOW_LOOPBACK_PROVIDERS === "true";
  },
});

/** For other areas (records): the stored data type by id or by name (case-insensitive), key in clear. */
export const dataTypeReader = createDataTypeReader(dynamoDataTypeStore);
