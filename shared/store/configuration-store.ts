import { configurationSchema, type RoutingConfiguration } from "#shared/domain/configurations/schema";
import { type ConfigurationStore, profileInUseError } from "#shared/domain/configurations/service";
import { ValidationError } from "#shared/domain/errors";
import { BatchGetCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient, tableName, type TransactItem } from "#shared/store/dynamo";
import { hubRefAttributes, previousCondition, writeHubChild } from "#shared/store/hub-references";
import { concurrentUpdateError, getVersioned } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { type Lease, put, remove, versionConflict } from "#shared/store/transactions";
import { queryPage, queryPageAcross, queryUpTo } from "#shared/store/pagination";

/** Most profile ids `idsOfHub` returns: a hub has a handful of profiles, this only bounds the read. */
export const maxConfigurationIdsOfHub = 1000;

function configurationItem(configuration: RoutingConfiguration): Record<string, unknown> {
  return {
    ...configuration,
    ...hubRefAttributes,
    entity: "configuration",
    GSI1PK: keys.configurationsByHub(configuration.organizationId, configuration.hubId),
    GSI1SK: `${keys.configurationPrefix}${configuration._id}`,
  };
}

/**
 * The listed vehicles exist and belong to the profile's hub, at the moment of the write: a lease
 * (one consistent BatchGet) rather than a condition check per vehicle, so profiles sharing a
 * vehicle never name a common item (profiles do not pin vehicles).
 */
function vehiclesLease(configuration: RoutingConfiguration): Lease {
  return async () => {
    const ids = [...new Set(configuration.vehicleIds)];
    const hubOf = new Map<string, unknown>();
    for (let start = 0; start < ids.length; start += 100) {
      let pending: Array<Record<string, unknown>> | undefined = ids
        .slice(start, start + 100)
        .map((id) => ({ ...keys.vehicle(configuration.organizationId, id) }));
      for (let round = 0; pending && pending.length > 0 && round < 10; round++) {
        const output = await documentClient().send(
          new BatchGetCommand({
            RequestItems: {
              [tableName()]: {
                Keys: pending,
                ConsistentRead: true,
                ProjectionExpression: "#id, hubId",
                ExpressionAttributeNames: { "#id": "_id" },
              },
            },
          }),
        );
        for (const item of output.Responses?.[tableName()] ?? []) hubOf.set(String(item._id), item.hubId);
        pending = output.UnprocessedKeys?.[tableName()]?.Keys as Array<Record<string, unknown>> | undefined;
      }
    }
    const wrong = configuration.vehicleIds.flatMap((id, index) => (hubOf.get(id) === configuration.hubId ? [] : [index]));
    if (wrong.length > 0) {
      throw new ValidationError(
        wrong.map((index) => ({
          field: `vehicleIds.${index}`,
          message: `vehicle ${configuration.vehicleIds[index]} is not a vehicle of hub ${configuration.hubId}`,
        })),
      );
    }
  };
}

type ProfileMeaning = { kind: "profile" } | { kind: "schedules" };

export const dynamoConfigurationStore: ConfigurationStore = {
  async insert(configuration) {
    const key = keys.configuration(configuration.organizationId, configuration._id);
    const failed = await writeHubChild<ProfileMeaning>(
      { organizationId: configuration.organizationId, kind: "configuration", childId: configuration._id, to: configuration.hubId },
      () => [
        [
          put({ ...configurationItem(configuration), ...key, version: 1 }, { ConditionExpression: "attribute_not_exists(PK)" }),
          { kind: "profile" },
        ],
      ],
      { leases: [vehiclesLease(configuration)] },
    );
    // The profile's own put can only fail on an id collision: something badly wrong, not a client mistake.
    if (failed !== undefined) throw concurrentUpdateError();
  },

  async find(organizationId, configurationId) {
    const found = await getVersioned<RoutingConfiguration>(keys.configuration(organizationId, configurationId));
    return found && { configuration: configurationSchema.parse(found.value), version: found.version };
  },

  async replace(configuration, previous) {
    const key = keys.configuration(configuration.organizationId, configuration._id);
    const failed = await writeHubChild<ProfileMeaning>(
      {
        organizationId: configuration.organizationId,
        kind: "configuration",
        childId: configuration._id,
        from: previous.hubId,
        to: configuration.hubId,
      },
      (legacy) => [
        [
          put({ ...configurationItem(configuration), ...key, version: previous.version + 1 }, previousCondition(previous.version, legacy)),
          { kind: "profile" },
        ],
      ],
      {
        leases: [vehiclesLease(configuration)],
        previous: { key, version: previous.version, label: (meaning) => meaning.kind === "profile" },
      },
    );
    if (failed !== undefined) throw await versionConflict(key);
  },

  async remove(organizationId, configurationId, previous) {
    // The profile's schedule count must be zero (or never written): schedules count themselves in
    // their own transactions (schedule-store.ts), so a schedule written concurrently either is
    // counted here (409) or fails on the missing profile — never both.
    const key = keys.configuration(organizationId, configurationId);
    const scheduleCountIsZero: TransactItem = remove(keys.configurationScheduleRefs(organizationId, configurationId), {
      ConditionExpression: "attribute_not_exists(scheduleRefs) OR scheduleRefs = :zero",
      ExpressionAttributeValues: { ":zero": 0 },
    });
    const failed = await writeHubChild<ProfileMeaning>(
      { organizationId, kind: "configuration", childId: configurationId, from: previous.hubId },
      (legacy) => [
        [remove(key, previousCondition(previous.version, legacy)), { kind: "profile" }],
        [scheduleCountIsZero, { kind: "schedules" }],
      ],
      { previous: { key, version: previous.version, label: (meaning) => meaning.kind === "profile" } },
    );
    if (failed === undefined) return true;
    if (failed.some((meaning) => meaning.kind === "schedules")) throw profileInUseError(configurationId);
    return false;
  },

  async hasSchedules(organizationId, configurationId) {
    // The schedules-by-configuration index (GSI2 of schedule items); one item is enough to answer.
    const page = await queryPage({
      index: "GSI2",
      partition: keys.schedulesByConfiguration(organizationId, configurationId),
      limit: 1,
      projection: ["PK"],
    });
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
    const items = await queryUpTo({
      index: "GSI1",
      partition: keys.configurationsByHub(organizationId, hubId),
      max: maxConfigurationIdsOfHub,
      projection: ["_id"],
    });
    return items.map((item) => String(item._id));
  },
};
