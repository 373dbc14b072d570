/**
 * Tenant plans: the one typed config that both the CDK stack (API Gateway usage plans) and the local
 * runtime (token bucket and counters in the local store) read. Operators add their own plans here.
 *
 * - `rate`/`burst`: steady requests per second and bucket size (API Gateway usage-plan throttle).
 * - `callQuota`: calls per `day` or `month` (API Gateway usage-plan quota); omitted = unlimited.
 * - `runSecondsPerMonth`: optimizer seconds a tenant's routing runs may use per calendar month (UTC);
 *   omitted = unlimited. Checked by the product itself (the gateway cannot see run time).
 * - `maxRunsQueued`: runs queued or running at once for the tenant (the active-run cap).
 * - `importRecordsPerMonth`: records the tenant's imports from the earlier version may write per
 *   calendar month (UTC); omitted = unlimited. An import is charged its header's `recordCount` when
 *   it starts (refused with 429 `import-quota-429` when that does not fit) and given back what it
 *   did not write when it ends.
 * - `maxImportsRunning`: imports queued or running at once for the tenant (429 `import-429`);
 *   omitted = 1.
 * - `maxImportBytes`: largest export file an import may read (400 on `export`); omitted = 1 GiB.
 * - `travelElementsPerMonth`: road-network matrix entries (origin × destination pairs asked of an osrm
 *   or amazonLocation provider, cache hits excluded) per calendar month (UTC); omitted = unlimited.
 * - `travelProviders`: the travel providers (names in the operator's providers document) the tenant's
 *   routing profiles may name; omitted = every declared provider. `greatCircle` is always allowed (it
 *   asks no engine). Checked when a profile is written (400) and again when a run starts (the run fails).
 * - `travelDollarsPerMonth`: per provider name, the most the tenant's runs may spend on it per calendar
 *   month (UTC), in dollars at the provider's declared `pricePer1000Elements`; a provider without a
 *   price, or not named here, has no dollar cap (shared/domain/travel/spend.ts).
 * - `maxWebhooks`: webhook subscriptions the tenant may hold; omitted = `defaultMaxWebhooks`.
 * - `positionSamplesPerMonth`: vehicle position samples stored per calendar month (UTC); omitted =
 *   unlimited. Vehicles reserve them in chunks (shared/domain/vehicles/positions.ts); over the cap a
 *   report answers 429 `position-quota-429`.
 */
export interface Plan {
  name: string;
  description: string;
  rate: number;
  burst: number;
  callQuota?: { limit: number; period: "day" | "month" };
  runSecondsPerMonth?: number;
  maxRunsQueued: number;
  importRecordsPerMonth?: number;
  maxImportsRunning?: number;
  maxImportBytes?: number;
  travelElementsPerMonth?: number;
  travelProviders?: readonly string[];
  travelDollarsPerMonth?: Readonly<Record<string, number>>;
  maxWebhooks?: number;
  positionSamplesPerMonth?: number;
}

/** Webhook subscriptions per organization when its plan names no `maxWebhooks`. */
export const defaultMaxWebhooks = 10;

export const plans = [
  {
    name: "free",
    description: "Evaluation: low rate, small daily quota.",
    rate: 5,
    burst: 10,
    callQuota: { limit: 5_000, period: "day" },
    runSecondsPerMonth: 3_600,
    maxRunsQueued: 2,
    importRecordsPerMonth: 10_000,
    maxImportsRunning: 1,
    maxImportBytes: 10 * 1024 * 1024,
    travelElementsPerMonth: 1_000_000,
    positionSamplesPerMonth: 100_000,
  },
  {
    name: "standard",
    description: "The default plan: what an organization gets when it is enrolled without a plan.",
    rate: 50,
    burst: 100,
    callQuota: { limit: 1_000_000, period: "month" },
    runSecondsPerMonth: 360_000,
    maxRunsQueued: 5,
    importRecordsPerMonth: 1_000_000,
    maxImportsRunning: 2,
    maxImportBytes: 1024 * 1024 * 1024,
    travelElementsPerMonth: 50_000_000,
    positionSamplesPerMonth: 100_000_000,
  },
  {
    name: "enterprise",
    description: "High rate, no call quota.",
    rate: 500,
    burst: 1_000,
    runSecondsPerMonth: 3_600_000,
    maxRunsQueued: 50,
    importRecordsPerMonth: 20_000_000,
    maxImportsRunning: 5,
    maxImportBytes: 5 * 1024 * 1024 * 1024,
  },
] as const satisfies readonly Plan[];

export type PlanName = (typeof plans)[number]["name"];

export const defaultPlanName: PlanName = "standard";

export function planNamed(name: string): Plan | undefined {
  return (plans as readonly Plan[]).find((plan) => plan.name === name);
}

/** One stretch of a tenant on a plan: from `from` (ISO instant) until `to` (absent: still on it). */
export interface PlanPeriod {
  plan: string;
  from: string;
  to?: string;
  /** On AWS, the API Gateway usage plan the key was on (what GET /v3/usage asks for the period's calls). */
  usagePlanId?: string;
}

/** A tenant record: one per enrolled organization. */
export interface Tenant {
  organizationId: string;
  plan: string;
  /**
   * Every plan the tenant was on, oldest first, the last one open (records enrolled before the
   * history have none: their current plan since `createdTime`). What billing sums calls over.
   */
  planHistory?: PlanPeriod[];
  status: "active" | "suspended";
  /** API Gateway API key id on AWS; locally a reference (`local-<uuid>`) to a key that has no value. */
  apiKeyId?: string;
  /** The key value API Gateway matches against the usage plan (the authorizer returns it as usageIdentifierKey). AWS only: never stored locally. */
  apiKeyValue?: string;
  createdTime: string;
  updatedTime: string;
}
