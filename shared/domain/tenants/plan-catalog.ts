import * as z from "zod/mini";
import { providerNamePattern } from "#shared/domain/travel/providers";
import { defaultPlanName, type Plan, plans as productPlans } from "#shared/domain/tenants/plans";

/**
 * The plans in force: the product's plans (plans.ts) with the operator's own merged in. Operators
 * add or replace plans with a JSON document `{ "defaultPlan"?: name, "plans": Plan[] }` (a plan
 * with the name of a product plan replaces it); the CDK app and the local runtime read the same
 * document (docs/operations.md, "Tenants and plans"), so the usage plans on AWS and the local token buckets
 * can never differ.
 */
const planSchema = z.strictObject({
  name: z.string().check(z.regex(/^[a-z0-9][a-z0-9-]{0,39}$/, "lowercase letters, digits and dashes, at most 40")),
  description: z._default(z.string(), ""),
  rate: z.number().check(z.positive(), z.maximum(10_000)),
  burst: z.int().check(z.minimum(1), z.maximum(5_000)),
  callQuota: z.optional(z.strictObject({ limit: z.int().check(z.minimum(1)), period: z.enum(["day", "month"]) })),
  runSecondsPerMonth: z.optional(z.number().check(z.positive())),
  maxRunsQueued: z.int().check(z.minimum(1), z.maximum(1_000)),
  importRecordsPerMonth: z.optional(z.int().check(z.minimum(1))),
  maxImportsRunning: z.optional(z.int().check(z.minimum(1), z.maximum(100))),
  // S3 takes at most 5 GiB in one POST (the presigned upload form).
  maxImportBytes: z.optional(z.int().check(z.minimum(1024), z.maximum(5 * 1024 * 1024 * 1024))),
  travelElementsPerMonth: z.optional(z.number().check(z.int(), z.minimum(0))),
  travelProviders: z.optional(
    z.readonly(z.array(z.string().check(z.regex(providerNamePattern, "a provider name is letters, digits, _ and -, at most 64")))),
  ),
  travelDollarsPerMonth: z.optional(
    z.readonly(
      z.record(
        z.string().check(z.regex(providerNamePattern, "a provider name is letters, digits, _ and -, at most 64")),
        z.number().check(z.minimum(0)),
      ),
    ),
  ),
  maxWebhooks: z.optional(z.int().check(z.minimum(0), z.maximum(100))),
  positionSamplesPerMonth: z.optional(z.int().check(z.minimum(0))),
});

export const planOverridesSchema = z.strictObject({
  defaultPlan: z.optional(z.string()),
  plans: z._default(z.array(planSchema), []),
});

export type PlanOverrides = z.input<typeof planOverridesSchema>;

export interface PlanCatalog {
  plans: readonly Plan[];
  defaultPlan: Plan;
  named(name: string): Plan | undefined;
}

/** Product plans plus `overrides` (parsed and checked: a malformed document throws, naming the problem). */
export function planCatalog(overrides: unknown = {}): PlanCatalog {
  const parsed = planOverridesSchema.safeParse(overrides);
  if (!parsed.success)
    throw new Error(
      `tenant plans: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "document"}: ${issue.message}`).join("; ")}`,
    );
  const byName = new Map<string, Plan>((productPlans as readonly Plan[]).map((plan) => [plan.name, plan]));
  for (const plan of parsed.data.plans) byName.set(plan.name, plan);
  const defaultName = parsed.data.defaultPlan ?? defaultPlanName;
  const defaultPlan = byName.get(defaultName);
  if (!defaultPlan) throw new Error(`tenant plans: the default plan "${defaultName}" is not a plan`);
  return { plans: [...byName.values()], defaultPlan, named: (name) => byName.get(name) };
}

/** Where a call quota of `period` starts again after `now` (UTC midnight of the next day, or the 1st of the next month). */
export function quotaResetsAt(period: "day" | "month", now: Date): Date {
  return period === "day"
    ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1))
    : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/**
 * The 429 message of a used-up call quota: which quota, and when it resets. The same words on AWS
 * (the authorizer hands them to the QUOTA_EXCEEDED gateway response) and locally.
 */
export function quotaExceededMessage(plan: Plan): string {
  if (!plan.callQuota) return "Call quota exceeded.";
  const { limit, period } = plan.callQuota;
  const resets = period === "day" ? "at 00:00 UTC every day" : "at 00:00 UTC on the 1st of every month";
  // No double quote or backslash: the stack's QUOTA_EXCEEDED response puts it in JSON as it is (plan names are [a-z0-9-]).
  return `The ${period === "day" ? "daily" : "monthly"} call quota of plan ${plan.name} (${limit} calls per ${period}) is used up; it resets ${resets}.`;
}

/** The name of `plan`'s API Gateway usage plan in the stack `stackName` (the stack names it, the tenant CLI finds it by it). */
export const usagePlanName = (stackName: string, plan: string) => `${stackName}-${plan}`;
