import { appConfig } from "#shared/config/env";
import { dataTypeReader } from "#shared/app/data-types";
import { createRecordService } from "#shared/domain/records/service";
import { createExternalProvider } from "#shared/http/external-provider";
import { entityExistence } from "#shared/store/entity-existence";
import { dynamoRecordStore } from "#shared/store/record-store";

/** Composition root of the records area: the domain service over its DynamoDB store, the data type reader and the external-API fetch. */
export const recordService = createRecordService({
  store: dynamoRecordStore,
  dataTypes: dataTypeReader,
  entities: entityExistence,
  external: createExternalProvider({ allowLoopback: () => appConfig().ALLOW_LOOPBACK_PROVIDERS === "true" }),
});
