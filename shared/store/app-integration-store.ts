import { type AppIntegrationRecord, appIntegrationRecordSchema } from "#shared/domain/app-integrations/schema";
import type { AppIntegrationStore } from "#shared/domain/app-integrations/service";
import { concurrentUpdateError, deleteItem, getVersioned, insertItem, replaceItem } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { queryPage } from "#shared/store/pagination";

/** Items are read back through the schema: known fields only. */
const appIntegrationItem = (record: AppIntegrationRecord): Record<string, unknown> => ({ ...record, entity: "appIntegration" });

export const dynamoAppIntegrationStore: AppIntegrationStore = {
  async insert(record) {
    const inserted = await insertItem(keys.appIntegration(record.organizationId, record._id), appIntegrationItem(record));
    // Ids are fresh; a collision is a server fault, not a client mistake.
    if (!inserted) throw concurrentUpdateError();
  },

  async find(organizationId, integrationId) {
    const found = await getVersioned<AppIntegrationRecord>(keys.appIntegration(organizationId, integrationId));
    return found && { record: appIntegrationRecordSchema.parse(found.value), version: found.version };
  },

  async replace(record, expectedVersion) {
    await replaceItem(keys.appIntegration(record.organizationId, record._id), appIntegrationItem(record), expectedVersion);
  },

  remove(organizationId, integrationId, expectedVersion) {
    return deleteItem(keys.appIntegration(organizationId, integrationId), expectedVersion);
  },

  async list(organizationId, page) {
    const found = await queryPage<Record<string, unknown>>({
      partition: keys.organizationPartition(organizationId),
      sortKeyPrefix: keys.appIntegrationPrefix,
      limit: page.limit,
      cursor: page.cursor,
    });
    return { items: found.items.map((item) => appIntegrationRecordSchema.parse(item)), nextCursor: found.nextCursor };
  },
};
