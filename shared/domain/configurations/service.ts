import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import {
  type ConfigurationInput,
  configurationInputSchema,
  type ConfigurationPatch,
  type RoutingConfiguration,
  writableConfigurationFields,
} from "#shared/domain/configurations/schema";
import { ConflictError, NotFoundError, ValidationError } from "#shared/domain/errors";
import { newId } from "#shared/domain/ids";
import { formatDateTimeUtc } from "#shared/domain/time";
import { parseWith } from "#shared/domain/validation";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";

export interface ConfigurationPage {
  items: RoutingConfiguration[];
  nextCursor: string | null;
}

export interface ConfigurationListFilter {
  hubId?: string | undefined;
  /** When the caller is restricted to hubs, only profiles of these hubs are listed. */
  allowedHubIds: string[];
  limit: number;
  cursor?: string | undefined;
}

/**
 * Persistence port of configuration profiles (DynamoDB in shared/store/configuration-store.ts).
 * Inserts and replaces are one transaction with the hub's reference count (400 on hubId when the
 * hub does not exist) and a condition check per listed vehicle (400 on `vehicleIds.<i>` when that
 * vehicle is not a vehicle of the hub).
 */
export interface ConfigurationStore {
  insert(configuration: RoutingConfiguration): Promise<void>;
  find(organizationId: string, configurationId: string): Promise<{ configuration: RoutingConfiguration; version: number } | undefined>;
  replace(configuration: RoutingConfiguration, previous: { version: number; hubId: string }): Promise<void>;
  remove(organizationId: string, configurationId: string, previous: { version: number; hubId: string }): Promise<boolean>;
  /** Whether any routing schedule of the organization names the profile (one bounded read). */
  hasSchedules(organizationId: string, configurationId: string): Promise<boolean>;
  list(organizationId: string, filter: ConfigurationListFilter): Promise<ConfigurationPage>;
  /** Ids of the hub's profiles, oldest first (bounded; see the store). */
  idsOfHub(organizationId: string, hubId: string): Promise<string[]>;
}

export const profileInUseError = (configurationId: string) =>
  new ConflictError(
    `The configuration profile ${configurationId} is still used by a routing schedule; point the schedules at another profile or delete them before deleting the profile.`,
    "configuration-409",
  );

function assertHubAllowed(caller: Caller, hubId: string): void {
  if (!callerMayUseHub(caller, hubId)) throw ValidationError.single("hubId", "hubId must be one of the hubs your token allows");
}

/** 400 unless the profile names a travel provider the operator declared (null: the great-circle default). */
function assertTravelProviderDeclared(input: ConfigurationInput, declared: readonly string[]): void {
  if (input.travelProvider === null || declared.includes(input.travelProvider)) return;
  throw ValidationError.single("travelProvider", `travelProvider must be one of the declared travel providers: ${declared.join(", ")}`);
}

export function createConfigurationService(
  store: ConfigurationStore,
  now: () => Date = () => new Date(),
  travelProviders: () => readonly string[] = () => ["greatCircle"],
  /** Why the organization's plan may not use a declared provider (naming those it may), or undefined (absent: every one). */
  travelProviderRefusal: (organizationId: string, provider: string) => Promise<string | undefined> = async () => undefined,
) {
  /** 400 unless the declared provider the profile names is one the organization's plan allows (null: great circle, always). */
  async function assertTravelProviderInPlan(caller: Caller, input: ConfigurationInput): Promise<void> {
    if (input.travelProvider === null) return;
    const refused = await travelProviderRefusal(caller.organizationId, input.travelProvider);
    if (refused) throw ValidationError.single("travelProvider", `travelProvider: ${refused}`);
  }

  async function findVisible(caller: Caller, configurationId: string) {
    const found = await store.find(caller.organizationId, configurationId);
    if (!found || !callerMayUseHub(caller, found.configuration.hubId)) throw new NotFoundError();
    return found;
  }

  async function write(
    caller: Caller,
    existing: { configuration: RoutingConfiguration; version: number },
    input: ConfigurationInput,
    versions?: VersionCondition,
  ) {
    assertHubAllowed(caller, input.hubId);
    assertTravelProviderDeclared(input, travelProviders());
    await assertTravelProviderInPlan(caller, input);
    const configuration: RoutingConfiguration = {
      _id: existing.configuration._id,
      ...input,
      organizationId: caller.organizationId,
      createdTime: existing.configuration.createdTime,
      updatedTime: formatDateTimeUtc(now()),
    };
    await writeUnder(
      versions,
      () => store.replace(configuration, { version: existing.version, hubId: existing.configuration.hubId }),
      existing.version + 1,
    );
    return configuration;
  }

  return {
    async create(caller: Caller, input: ConfigurationInput): Promise<RoutingConfiguration> {
      assertHubAllowed(caller, input.hubId);
      assertTravelProviderDeclared(input, travelProviders());
      await assertTravelProviderInPlan(caller, input);
      const time = now();
      const configuration: RoutingConfiguration = {
        _id: newId(time),
        ...input,
        organizationId: caller.organizationId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
      };
      await store.insert(configuration);
      return configuration;
    },

    async get(caller: Caller, configurationId: string, versions?: VersionCondition): Promise<RoutingConfiguration> {
      const found = await findVisible(caller, configurationId);
      versions?.check(found.version);
      return found.configuration;
    },

    async replace(
      caller: Caller,
      configurationId: string,
      input: ConfigurationInput,
      versions?: VersionCondition,
    ): Promise<RoutingConfiguration> {
      const existing = await findVisible(caller, configurationId);
      versions?.check(existing.version);
      return write(caller, existing, input, versions);
    },

    /** Merges the patch over the stored profile and validates the result as a whole (vehicles re-checked against the hub). */
    async patch(
      caller: Caller,
      configurationId: string,
      patch: ConfigurationPatch,
      versions?: VersionCondition,
    ): Promise<RoutingConfiguration> {
      const existing = await findVisible(caller, configurationId);
      versions?.check(existing.version);
      const current = Object.fromEntries(writableConfigurationFields.map((field) => [field, existing.configuration[field]]));
      return write(caller, existing, parseWith(configurationInputSchema, { ...current, ...patch }), versions);
    },

    /**
     * 409 while a routing schedule still names the profile (its runs would have nothing to plan with).
     * A schedule saved in the instant between this check and the delete is not caught here; its run
     * is then skipped with the reason (see the run worker).
     */
    async remove(caller: Caller, configurationId: string, versions?: VersionCondition): Promise<void> {
      const existing = await findVisible(caller, configurationId);
      versions?.check(existing.version);
      // The store's delete also requires the profile's schedule count to be zero (race-free); this
      // read still covers schedules written before the count existed.
      if (await store.hasSchedules(caller.organizationId, configurationId)) throw profileInUseError(configurationId);
      const previous = { version: existing.version, hubId: existing.configuration.hubId };
      if (!(await writeUnder(versions, () => store.remove(caller.organizationId, configurationId, previous)))) throw new NotFoundError();
    },

    async list(
      caller: Caller,
      query: { hubId?: string | undefined; limit: number; cursor?: string | undefined },
    ): Promise<ConfigurationPage> {
      if (query.hubId !== undefined) assertHubAllowed(caller, query.hubId);
      return store.list(caller.organizationId, { ...query, allowedHubIds: caller.hubIds });
    },

    /**
     * For routing schedules and runs (no caller: the organization comes from the schedule): the
     * profile as stored, or undefined when it does not exist in that organization.
     */
    async findConfiguration(organizationId: string, configurationId: string): Promise<RoutingConfiguration | undefined> {
      return (await store.find(organizationId, configurationId))?.configuration;
    },

    /** For the schedules' `hubId` filter: ids of the hub's profiles. */
    configurationIdsOfHub(organizationId: string, hubId: string): Promise<string[]> {
      return store.idsOfHub(organizationId, hubId);
    },
  };
}

export type ConfigurationService = ReturnType<typeof createConfigurationService>;
