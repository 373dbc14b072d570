import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import { ForbiddenError, NotFoundError } from "#shared/domain/errors";
import { type Hub, type HubInput, hubInputSchema, type HubPatch, writableHubFields } from "#shared/domain/hubs/schema";
import { newId } from "#shared/domain/ids";
import { formatDateTimeUtc } from "#shared/domain/time";
import { parseWith } from "#shared/domain/validation";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";

export interface HubPage {
  items: Hub[];
  nextCursor: string | null;
}

export interface HubListFilter {
  /** When the caller is restricted to hubs, only these hubs are listed. */
  allowedHubIds: string[];
  limit: number;
  cursor?: string | undefined;
}

/**
 * Persistence port of hubs (DynamoDB in shared/store/hub-store.ts). The hub item also carries
 * reference counts maintained by the vehicle, visit and configuration stores; `update` never
 * touches them and `remove` refuses while any is above zero.
 */
export interface HubStore {
  insert(hub: Hub): Promise<void>;
  find(organizationId: string, hubId: string): Promise<{ hub: Hub; version: number } | undefined>;
  /** Rewrites the writable fields if the hub still has `expectedVersion` (409 when changed, 404 when gone). */
  update(hub: Hub, expectedVersion: number): Promise<void>;
  /** Deletes the hub if it has `expectedVersion` and no references (409 hub-409 naming them, 404 when gone). */
  remove(organizationId: string, hubId: string, expectedVersion: number): Promise<void>;
  list(organizationId: string, filter: HubListFilter): Promise<HubPage>;
}

export function createHubService(store: HubStore, now: () => Date = () => new Date()) {
  /** Another organization's hub, or one the token does not allow, does not exist for this caller. */
  async function findVisible(caller: Caller, hubId: string) {
    const found = await store.find(caller.organizationId, hubId);
    if (!found || !callerMayUseHub(caller, hubId)) throw new NotFoundError();
    return found;
  }

  async function write(caller: Caller, existing: { hub: Hub; version: number }, input: HubInput, versions?: VersionCondition): Promise<Hub> {
    const hub: Hub = {
      _id: existing.hub._id,
      ...input,
      organizationId: caller.organizationId,
      createdTime: existing.hub.createdTime,
      updatedTime: formatDateTimeUtc(now()),
    };
    await writeUnder(versions, () => store.update(hub, existing.version), existing.version + 1);
    return hub;
  }

  return {
    async create(caller: Caller, input: HubInput): Promise<Hub> {
      // A new hub can never be in a restricted token's list, so such a caller could not even read it back.
      if (caller.hubIds.length > 0) {
        throw new ForbiddenError("Your token is limited to some hubs; only a token without hubIds can create hubs.", "hub-403");
      }
      const time = now();
      const hub: Hub = {
        _id: newId(time),
        ...input,
        organizationId: caller.organizationId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
      };
      await store.insert(hub);
      return hub;
    },

    async get(caller: Caller, hubId: string, versions?: VersionCondition): Promise<Hub> {
      const found = await findVisible(caller, hubId);
      versions?.check(found.version);
      return found.hub;
    },

    async replace(caller: Caller, hubId: string, input: HubInput, versions?: VersionCondition): Promise<Hub> {
      const existing = await findVisible(caller, hubId);
      versions?.check(existing.version);
      return write(caller, existing, input, versions);
    },

    async patch(caller: Caller, hubId: string, patch: HubPatch, versions?: VersionCondition): Promise<Hub> {
      const existing = await findVisible(caller, hubId);
      versions?.check(existing.version);
      const current = Object.fromEntries(writableHubFields.map((field) => [field, existing.hub[field]]));
      return write(caller, existing, parseWith(hubInputSchema, { ...current, ...patch }), versions);
    },

    async remove(caller: Caller, hubId: string, versions?: VersionCondition): Promise<void> {
      const existing = await findVisible(caller, hubId);
      versions?.check(existing.version);
      await writeUnder(versions, () => store.remove(caller.organizationId, hubId, existing.version));
    },

    list(caller: Caller, query: { limit: number; cursor?: string | undefined }): Promise<HubPage> {
      return store.list(caller.organizationId, { ...query, allowedHubIds: caller.hubIds });
    },
  };
}

export type HubService = ReturnType<typeof createHubService>;
