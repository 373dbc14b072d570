/**
 * Tenant plans: the one typed config that both the CDK stack (API Gateway usage plans) and the local
 * runtime (token bucket and counters in the local store) read. Operators add their own plans here.
 *
 * - `rate`/`burst`: steady requests per second and bucket size (API Gateway usage-plan throttle).
 * - `callQuota`: calls per `day` or `month` (API Gateway usage-plan quota); omitted = unlimited.
 * - `runSecondsPerMonth`: optimizer seconds a tenant's routing runs may use per calendar month (UTC);
 *   omitted = unlimited. Checked by the product itself (the gateway cannot see run time).
 * - `maxRunsQueued`: runs queued or running at once for the tenant (the active-run cap).
 * - `maxWebhooks`: webhook subscriptions the tenant may hold; omitted = `defaultMaxWebhooks`.
 */
export interface Plan {
  name: string;
  description: string;
  rate: number;
  burst: number;
  callQuota?: { limit: number; period: "day" | "month" };
  runSecondsPerMonth?: number;
  maxRunsQueued: number;
  maxWebhooks?: number;
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
  },
  {
    name: "standard",
    description: "The default plan: what an organization gets when it is enrolled without a plan.",
    rate: 50,
    burst: 100,
    callQuota: { limit: 1_000_000, period: "month" },
    runSecondsPerMonth: 360_000,
    maxRunsQueued: 5,
  },
  {
    name: "enterprise",
    description: "High rate, no call quota.",
    rate: 500,
    burst: 1_000,
    runSecondsPerMonth: 3_600_000,
    maxRunsQueued: 50,
  },
] as const satisfies readonly Plan[];

export type PlanName = (typeof plans)[number]["name"];

export const defaultPlanName: PlanName = "standard";

export function planNamed(name: string): Plan | undefined {
  return (plans as readonly Plan[]).find((plan) => plan.name === name);
}

/** A tenant record: one per enrolled organization. */
export interface Tenant {
  organizationId: string;
  plan: string;
  status: "active" | "suspended";
  /** API Gateway API key id (AWS only; the local runtime leaves it out). */
  apiKeyId?: string;
  /** The key value API Gateway matches against the usage plan (the authorizer returns it as usageIdentifierKey). */
  apiKeyValue?: string;
  createdTime: string;
  updatedTime: string;
}
