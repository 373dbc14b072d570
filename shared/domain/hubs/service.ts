import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import { ForbiddenError, NotFoundError } from "#shared/domain/errors";
import type { StoredCustomValues } from "#shared/domain/extensions/schema";
import type { CustomValues, CustomValuesWrite, CustomWriteMode, ExtensionType } from "#shared/domain/extensions/service";
import { type Hub, type HubInput, hubInputSchema, type HubPatch, type HubView, writableHubFields } from "#shared/domain/hubs/schema";
import { newId } from "#shared/domain/ids";
import { formatDateTimeUtc } from "#shared/domain/time";
import { parseWith } from "#shared/domain/validation";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";

/** A stored hub with the custom values its item holds (docs/api/extensions.md). */
export interface StoredHub {
  hub: Hub;
  version: number;
  custom?: StoredCustomValues | undefined;
}

export interface HubPage {
  items: StoredHub[];
  nextCursor: string | null;
}

export interface HubListFilter {
  /** When the caller is restricted to hubs, only these hubs are listed. */
  allowedHubIds: string[];
  limit: number;
  cursor?: string | undefined;
}

/**
 * Persistence port of hubs (DynamoDB in shared/store/hub-store.ts). What names a hub (vehicles,
 * visits, configuration profiles) keeps its own reference item beside it, never a counter on the hub;
 * `remove` refuses while any exists (or while a legacy count on an old hub item is above zero).
 */
export interface HubStore {
  /** `custom`: the checked custom values to store (their uniqueness claims taken in the same transaction). */
  insert(hub: Hub, custom?: CustomValuesWrite | undefined): Promise<void>;
  /** `consistent: false` (GET only): half the read units; may miss the latest write for a moment. */
  find(organizationId: string, hubId: string, options?: { consistent: boolean }): Promise<StoredHub | undefined>;
  /**
   * Rewrites every field of the hub if it still has `previous.version` (409 when changed, 404 when
   * gone); `custom` undefined keeps the stored custom values.
   */
  update(hub: Hub, previous: StoredHub, custom?: CustomValuesWrite | undefined): Promise<void>;
  /** Deletes the hub if it has `previous.version` and no references (409 hub-409 naming them, 404 when gone), releasing its custom values' claims. */
  remove(organizationId: string, hubId: string, previous: StoredHub): Promise<void>;
  list(organizationId: string, filter: HubListFilter): Promise<HubPage>;
}

/** Hubs; `custom` is checked by the organization's hub extension data type (docs/api/extensions.md). */
export function createHubService(store: HubStore, custom: CustomValues, now: () => Date = () => new Date()) {
  /** Another organization's hub, or one the token does not allow, does not exist for this caller. */
  async function findVisible(caller: Caller, hubId: string) {
    const found = await store.find(caller.organizationId, hubId);
    if (!found || !callerMayUseHub(caller, hubId)) throw new NotFoundError();
    return found;
  }

  const toView = (caller: Caller, type: ExtensionType | undefined, hub: Hub, stored: StoredCustomValues | undefined): HubView => {
    const shown = custom.view(caller, type, stored);
    return shown === undefined ? hub : { ...hub, custom: shown };
  };

  async function write(
    caller: Caller,
    existing: StoredHub,
    input: HubInput,
    mode: CustomWriteMode,
    versions?: VersionCondition,
  ): Promise<HubView> {
    const { custom: sentCustom, ...fields } = input;
    const type = await custom.typeFor(caller.organizationId, "hub");
    const customWrite = await custom.prepare(caller, "hub", type, existing.custom, sentCustom, mode);
    const hub: Hub = {
      _id: existing.hub._id,
      ...fields,
      organizationId: caller.organizationId,
      createdTime: existing.hub.createdTime,
      updatedTime: formatDateTimeUtc(now()),
    };
    await writeUnder(versions, () => store.update(hub, existing, customWrite), existing.version + 1);
    return toView(caller, type, hub, customWrite?.next ?? existing.custom);
  }

  return {
    async create(caller: Caller, input: HubInput): Promise<HubView> {
      // A new hub can never be in a restricted token's list, so such a caller could not even read it back.
      if (caller.hubIds.length > 0) {
        throw new ForbiddenError("Your token is limited to some hubs; only a token without hubIds can create hubs.", "hub-403");
      }
      const { custom: sentCustom, ...fields } = input;
      const type = await custom.typeFor(caller.organizationId, "hub");
      const customWrite = await custom.prepare(caller, "hub", type, undefined, sentCustom, "create");
      const time = now();
      const hub: Hub = {
        _id: newId(time),
        ...fields,
        organizationId: caller.organizationId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
      };
      await store.insert(hub, customWrite);
      return toView(caller, type, hub, customWrite?.next);
    },

    async get(caller: Caller, hubId: string, versions?: VersionCondition): Promise<HubView> {
      // Two eventually consistent reads, 0.5 RRU each (docs/performance.md, "Read costs"); a hub not
      // found so is read again consistently, so a hub just created is never a 404.
      const [eventual, type] = await Promise.all([
        store.find(caller.organizationId, hubId, { consistent: false }),
        custom.typeFor(caller.organizationId, "hub", { consistent: false }),
      ]);
      const found = eventual ?? (await store.find(caller.organizationId, hubId));
      if (!found || !callerMayUseHub(caller, hubId)) throw new NotFoundError();
      versions?.check(found.version);
      return toView(caller, type, found.hub, found.custom);
    },

    async replace(caller: Caller, hubId: string, input: HubInput, versions?: VersionCondition): Promise<HubView> {
      const existing = await findVisible(caller, hubId);
      versions?.check(existing.version);
      return write(caller, existing, input, "replace", versions);
    },

    async patch(caller: Caller, hubId: string, patch: HubPatch, versions?: VersionCondition): Promise<HubView> {
      const existing = await findVisible(caller, hubId);
      versions?.check(existing.version);
      const current = Object.fromEntries(writableHubFields.map((field) => [field, existing.hub[field]]));
      return write(caller, existing, parseWith(hubInputSchema, { ...current, ...patch }), "patch", versions);
    },

    async remove(caller: Caller, hubId: string, versions?: VersionCondition): Promise<void> {
      const existing = await findVisible(caller, hubId);
      versions?.check(existing.version);
      await writeUnder(versions, () => store.remove(caller.organizationId, hubId, existing));
    },

    async list(caller: Caller, query: { limit: number; cursor?: string | undefined }) {
      const [page, type] = await Promise.all([
        store.list(caller.organizationId, { ...query, allowedHubIds: caller.hubIds }),
        custom.typeFor(caller.organizationId, "hub", { consistent: false }),
      ]);
      return { items: page.items.map((item) => toView(caller, type, item.hub, item.custom)), nextCursor: page.nextCursor };
    },
  };
}

export type HubService = ReturnType<typeof createHubService>;
