import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { HubReferenceKind } from "#shared/domain/hubs/schema";
import { documentClient, tableName, type TransactItem } from "#shared/store/dynamo";
import { type ItemKey, keys } from "#shared/store/keys";
import { hubLease } from "#shared/store/parent-leases";
import { type Lease, put, remove, transactLabelled } from "#shared/store/transactions";

/**
 * References to a hub (docs/architecture.md, "Writes without shared items"). Each vehicle, visit and
 * configuration profile naming a hub has its own item in the hub's partition `ORG#o#HUB#h`: a visit
 * lives there itself, a vehicle or profile writes a marker (`VEHREF#id`, `CONFREF#id`) in the same
 * transaction as its own item. Children of one hub therefore never name a common item; a child
 * entering a hub confirms the hub by a parent lease, and a hub delete fences the hub, waits out the
 * leases and finds any child with one consistent query of that partition (shared/store/hub-store.ts).
 *
 * Children written before markers existed were counted on the hub item (`vehicleRefs`, `visitRefs`,
 * `configurationRefs`) and carry no `hubRef` attribute. Every write of a child conditions its
 * previous item on `hubRef`; a legacy child fails that, and the write is repeated once as its
 * migration: the count is decremented (a hub item write, once per legacy child) and the child gets
 * its marker. The hub delete still requires every legacy count to be zero.
 */

/** Attribute every child item written with a hub reference of its own carries. */
export const HUB_REF_ATTRIBUTE = "hubRef";
export const hubRefAttributes = { [HUB_REF_ATTRIBUTE]: true } as const;

/** Marker SK prefix per kind; visits are their own reference. */
export const markerPrefix: Record<HubReferenceKind, string | undefined> = {
  vehicle: "VEHREF#",
  configuration: "CONFREF#",
  visit: undefined,
};
export const legacyCounterAttribute: Record<HubReferenceKind, string> = {
  vehicle: "vehicleRefs",
  visit: "visitRefs",
  configuration: "configurationRefs",
};

export interface HubReferenceChange {
  organizationId: string;
  kind: HubReferenceKind;
  childId: string;
  /** Hub the child named before this write (undefined when it is created). */
  from?: string | undefined;
  /** Hub the child names after this write (undefined when it is deleted). */
  to?: string | undefined;
  /** Field reported when `to` is not a hub (default `hubId`). */
  field?: string;
}

/** The previous item's condition: its version, and (unless migrating a legacy child) that it has its own reference. */
export function previousCondition(expectedVersion: number, legacy: boolean) {
  return legacy
    ? { ConditionExpression: "version = :expected", ExpressionAttributeValues: { ":expected": expectedVersion } }
    : {
        ConditionExpression: "version = :expected AND attribute_exists(#hubRef)",
        ExpressionAttributeNames: { "#hubRef": HUB_REF_ATTRIBUTE },
        ExpressionAttributeValues: { ":expected": expectedVersion },
      };
}

type Internal = { hubReference: "legacyCounter" | "marker" };

function markerKey(change: HubReferenceChange, hubId: string): ItemKey | undefined {
  const prefix = markerPrefix[change.kind];
  return prefix === undefined ? undefined : keys.hubReferenceMarker(change.organizationId, hubId, prefix, change.childId);
}

function referenceItems(change: HubReferenceChange, legacy: boolean, legacyHubGone: boolean): Array<[TransactItem, Internal]> {
  const items: Array<[TransactItem, Internal]> = [];
  const moves = change.from !== change.to;
  const toMarker = change.to !== undefined ? markerKey(change, change.to) : undefined;
  const fromMarker = change.from !== undefined ? markerKey(change, change.from) : undefined;
  if (toMarker && (moves || legacy))
    items.push([put({ ...toMarker, entity: "hubReference", childKind: change.kind, childId: change.childId }), { hubReference: "marker" }]);
  if (fromMarker && moves && !legacy) items.push([remove(fromMarker), { hubReference: "marker" }]);
  if (legacy && change.from !== undefined && !legacyHubGone) {
    items.push([
      {
        Update: {
          TableName: tableName(),
          Key: keys.hub(change.organizationId, change.from),
          // attribute_exists: never create a stray hub item by counting on a key that is not a hub.
          ConditionExpression: "attribute_exists(PK)",
          UpdateExpression: "ADD #counter :minusOne",
          ExpressionAttributeNames: { "#counter": legacyCounterAttribute[change.kind] },
          ExpressionAttributeValues: { ":minusOne": -1 },
        },
      },
      { hubReference: "legacyCounter" },
    ]);
  }
  return items;
}

/**
 * Writes a child's items and its hub reference in one transaction. `entity(legacy)` builds the
 * child's own labelled items (its previous item under `previousCondition(version, legacy)`);
 * `previous` names that item, so a failure on it can be told apart from a legacy child. Resolves to
 * undefined when written, else the failed labels of the child's items. A hub it enters that is gone
 * or being deleted is the lease's 400 on `change.field`.
 */
export async function writeHubChild<Label>(
  change: HubReferenceChange,
  entity: (legacy: boolean) => Array<[TransactItem, Label]>,
  options: { previous?: { key: ItemKey; version: number; label: (label: Label) => boolean }; leases?: Lease[] } = {},
): Promise<Label[] | undefined> {
  let legacy = false;
  let legacyHubGone = false;
  for (;;) {
    const entering = change.to !== undefined && (change.from !== change.to || legacy);
    const leases = [...(entering ? [hubLease(change.organizationId, change.to as string, change.field)] : []), ...(options.leases ?? [])];
    const items: Array<[TransactItem, Label | Internal]> = [...entity(legacy), ...referenceItems(change, legacy, legacyHubGone)];
    const failed = await transactLabelled(items, { leases });
    if (failed === undefined) return undefined;
    const own = failed.filter((label): label is Label => !isInternal(label));
    if (legacy && own.length === 0 && failed.some((label) => isInternal(label) && label.hubReference === "legacyCounter")) {
      // The legacy count's hub is gone (written before hubs were enforced): nothing left to count.
      legacyHubGone = true;
      continue;
    }
    const previous = options.previous;
    if (!legacy && previous && own.some(previous.label)) {
      const output = await documentClient().send(
        new GetCommand({
          TableName: tableName(),
          Key: previous.key,
          ConsistentRead: true,
          ProjectionExpression: "version, #hubRef",
          ExpressionAttributeNames: { "#hubRef": HUB_REF_ATTRIBUTE },
        }),
      );
      if (output.Item && Number(output.Item.version ?? 0) === previous.version && output.Item[HUB_REF_ATTRIBUTE] === undefined) {
        legacy = true;
        continue;
      }
    }
    return own;
  }
}

function isInternal(label: unknown): label is Internal {
  return typeof label === "object" && label !== null && "hubReference" in label;
}
