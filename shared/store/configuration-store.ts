import { configurationSchema, type RoutingConfiguration } from "#shared/domain/configurations/schema";
import { type ConfigurationStore, profileInUseError } from "#shared/domain/configurations/service";
import { ValidationError } from "#shared/domain/errors";
import { tableName, type TransactItem } from "#shared/store/dynamo";
import { deleteVersioned, type EntityWriteOutcome, putNew, putVersioned, versionConflict, writeWithHubReferences } from "#shared/store/hub-store";
import { concurrentUpdateError, getVersioned } from "#shared/store/items";
import { type ItemKey, keys } from "#shared/store/keys";
import { queryPage, queryPageAcross, queryUpTo } from "#shared/store/pagination";

/** Most profile ids `idsOfHub` returns: a hub has a handful of profiles, this only bounds the read. */
export const maxConfigurationIdsOfHub = 1000;

function configurationItem(configuration: RoutingConfiguration): Record<string, unknown> {
  return {
    ...configuration,
    entity: "configuration",
    GSI1PK: keys.configurationsByHub(configuration.organizationId, configuration.hubId),
    GSI1SK: `${keys.configurationPrefix}${configuration._id}`,
  };
}

/** One condition check per listed vehicle: it exists and belongs to the profile's hub, at the moment of the write. */
function vehicleChecks(configuration: RoutingConfiguration): TransactItem[] {
  return configuration.vehicleIds.map((vehicleId) => ({
    ConditionCheck: {
      TableName: tableName(),
      Key: keys.vehicle(configuration.organizationId, vehicleId),
      ConditionExpression: "attribute_exists(PK) AND hubId = :hub",
      ExpressionAttributeValues: { ":hub": configuration.hubId },
    },
  }));
}

/** Entity item 0 is the profile; items 1… are the vehicle checks. */
async function failure(outcome: Exclude<EntityWriteOutcome, { ok: true }>, configuration: RoutingConfiguration, profileKey: ItemKey) {
  const missingVehicles = outcome.codes.flatMap((code, index) => (index > 0 && code === "ConditionalCheckFailed" ? [index - 1] : []));
  if (outcome.codes[0] === "ConditionalCheckFailed" || missingVehicles.length === 0) return versionConflict(profileKey);
  return new ValidationError(
    missingVehicles.map((index) => ({
      field: `vehicleIds.${index}`,
      message: `vehicle ${configuration.vehicleIds[index]} is not a vehicle of hub ${configuration.hubId}`,
    })),
  );
}

export const dynamoConfigurationStore: ConfigurationStore = {
  async insert(configuration) {
    const key = keys.configuration(configuration.organizationId, configuration._id);
    const outcome = await writeWithHubReferences([putNew(key, configurationItem(configuration)), ...vehicleChecks(configuration)], {
      organizationId: configuration.organizationId,
      kind: "configuration",
      to: configuration.hubId,
    });
    if (outcome.ok) return;
    const error = await failure(outcome, configuration, key);
    // The profile's own put can only fail on an id collision: something badly wrong, not a client mistake.
    throw outcome.codes[0] === "ConditionalCheckFailed" ? concurrentUpdateError() : error;
  },

  async find(organizationId, configurationId) {
    const found = await getVersioned<RoutingConfiguration>(keys.configuration(organizationId, configurationId));
    return found && { configuration: configurationSchema.parse(found.value), version: found.version };
  },

  async replace(configuration, previous) {
    const key = keys.configuration(configuration.organizationId, configuration._id);
    const outcome = await writeWithHubReferences(
      [putVersioned(key, configurationItem(configuration), previous.version), ...vehicleChecks(configuration)],
      { organizationId: configuration.organizationId, kind: "configuration", from: previous.hubId, to: configuration.hubId },
    );
    if (!outcome.ok) throw await failure(outcome, configuration, key);
  },

  async remove(organizationId, configurationId, previous) {
    // The profile's schedule count must be zero (or never written): schedules count themselves in
    // their own transactions (schedule-store.ts), so a schedule written concurrently either is
    // counted here (409) or fails on the missing profile — never both.
    const scheduleCountIsZero: TransactItem = {
      Delete: {
        TableName: tableName(),
        Key: keys.configurationScheduleRefs(organizationId, configurationId),
        ConditionExpression: "attribute_not_exists(scheduleRefs) OR scheduleRefs = :zero",
        ExpressionAttributeValues: { ":zero": 0 },
      },
    };
    const outcome = await writeWithHubReferences([deleteVersioned(keys.configuration(organizationId, configurationId), previous.version), scheduleCountIsZero], {
      organizationId,
      kind: "configuration",
      from: previous.hubId,
    });
    if (!outcome.ok && outcome.codes[1] === "ConditionalCheckFailed") throw profileInUseError(configurationId);
    return outcome.ok;
  },

  async hasSchedules(organizationId, configurationId) {
    // The schedules-by-configuration index (GSI2 of schedule items); one item is enough to answer.
    const page = await queryPage({ index: "GSI2", partition: keys.schedulesByConfiguration(organizationId, configurationId), limit: 1, projection: ["PK"] });
    return page.items.length > 0;
  },

  async list(organizationId, filter) {
    // A hub (asked for, or each hub a hub-limited token allows) is read from the by-hub index, so
    // no other hub's profile is read and skipped.
    const hubIds = filter.hubId !== undefined ? [filter.hubId] : [...new Set(filter.allowedHubIds)];
    const page =
      hubIds.length > 0
        ? await queryPageAcross<Record<string, unknown>>(
            hubIds.map((hubId) => ({ index: "GSI1", partition: keys.configurationsByHub(organizationId, hubId) })),
            filter.limit,
            filter.cursor,
          )
        : await queryPage<Record<string, unknown>>({
            partition: keys.organizationPartition(organizationId),
            sortKeyPrefix: keys.configurationPrefix,
            limit: filter.limit,
            cursor: filter.cursor,
          });
    return { items: page.items.map((item) => configurationSchema.parse(item)), nextCursor: page.nextCursor };
  },

  async idsOfHub(organizationId, hubId) {
    const items = await queryUpTo({ index: "GSI1", partition: keys.configurationsByHub(organizationId, hubId), max: maxConfigurationIdsOfHub, projection: ["_id"] });
    return items.map((item) => String(item._id));
  },
};
