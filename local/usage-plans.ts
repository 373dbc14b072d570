import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type PlanCatalog, quotaExceededMessage } from "#shared/domain/tenants/plan-catalog";
import { gatewayAnswers } from "#shared/http/gateway-responses";
import type { Plan } from "#shared/domain/tenants/plans";
import { documentClient as productDocumentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";

/**
 * The emulated usage plan is AWS's gateway, not the product: with the production-semantics proxy
 * in front of DynamoDB Local (local/dynamodb-semantics.ts), its counters go to DynamoDB Local
 * directly, so they are neither throttled nor counted among the functions' calls.
 */
let gatewayClient: DynamoDBDocumentClient | undefined;
function documentClient(): DynamoDBDocumentClient {
  const direct = process.env.DYNAMODB_LOCAL_ENDPOINT;
  if (!direct || direct === process.env.AWS_ENDPOINT_URL_DYNAMODB) return productDocumentClient();
  gatewayClient ??= DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: direct }));
  return gatewayClient;
}
/**
 * What API Gateway's usage plans do, for the local gateway: per tenant a token bucket (the plan's
 * `rate` per second, `burst` deep) in memory, and the call quota counted in the local store — one
 * `ADD calls :1` on the day's counter item (keys.callCounter) per accepted call, the item `npm run
 * usage` reads. A daily quota is enforced by that same write (conditional on the count being under
 * the limit); a monthly one by the month's total, read once per organization and month and then
 * kept in memory. Local only: on AWS the gateway counts, the functions never write per call.
 */
export type Admission =
  | { admitted: true }
  | { admitted: false; statusCode: 429; body: { status: false; message: string; failedCode: string } };

interface Bucket {
  tokens: number;
  refilledAt: number;
}

const utcDay = (now: Date) => now.toISOString().slice(0, 10);
const utcMonth = (now: Date) => now.toISOString().slice(0, 7);

export class LocalUsagePlans {
  private readonly buckets = new Map<string, Bucket>();
  private readonly monthTotals = new Map<string, Promise<{ calls: number }>>();

  constructor(
    private readonly plans: PlanCatalog,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Throttle, then quota (a throttled call uses no quota); an admitted call is counted. */
  async admit(organizationId: string, planName: string): Promise<Admission> {
    const plan = this.plans.named(planName);
    if (!plan) throw new Error(`plan "${planName}" is not configured`);
    const now = this.clock();
    if (!this.takeToken(organizationId, plan, now.getTime())) {
      const { message, failedCode } = gatewayAnswers.throttled;
      return { admitted: false, statusCode: 429, body: { status: false, message, failedCode } };
    }
    if (await this.countBestEffort(organizationId, plan, now)) return { admitted: true };
    // The message says which quota and when it resets (the same words as the stack's QUOTA_EXCEEDED response).
    return {
      admitted: false,
      statusCode: 429,
      body: { status: false, message: quotaExceededMessage(plan), failedCode: gatewayAnswers.quotaExceeded.failedCode },
    };
  }

  private takeToken(organizationId: string, plan: Plan, nowMs: number): boolean {
    const key = `${organizationId}\u0000${plan.name}`;
    const bucket = this.buckets.get(key) ?? { tokens: plan.burst, refilledAt: nowMs };
    bucket.tokens = Math.min(plan.burst, bucket.tokens + ((nowMs - bucket.refilledAt) / 1000) * plan.rate);
    bucket.refilledAt = nowMs;
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /**
   * API Gateway applies usage plan quotas "on a best-effort basis" (API Gateway Developer Guide, "Usage
   * plans and API keys for REST APIs"): its counting never fails a call. So a counter write the store
   * did not take (throttled, timed out, DynamoDB Local unreachable) admits the call uncounted, with a
   * line on stderr, instead of failing it; a quota found used up still refuses it.
   */
  private async countBestEffort(organizationId: string, plan: Plan, now: Date): Promise<boolean> {
    try {
      return await this.count(organizationId, plan, now);
    } catch (error) {
      process.stderr.write(`local usage plans: call of ${organizationId} admitted uncounted: ${(error as Error).message}\n`);
      return true;
    }
  }

  /** Counts the call unless it would exceed the quota; false when the quota is used up. */
  private async count(organizationId: string, plan: Plan, now: Date): Promise<boolean> {
    const quota = plan.callQuota;
    const add = (limit?: number) =>
      documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.callCounter(organizationId, utcDay(now)),
          UpdateExpression: "ADD calls :one",
          ...(limit !== undefined ? { ConditionExpression: "attribute_not_exists(calls) OR calls < :limit" } : {}),
          ExpressionAttributeValues: { ":one": 1, ...(limit !== undefined ? { ":limit": limit } : {}) },
        }),
      );
    if (quota?.period === "day") {
      try {
        await add(quota.limit);
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    }
    if (quota?.period === "month") {
      const total = await this.monthTotal(organizationId, utcMonth(now));
      if (total.calls >= quota.limit) return false;
      total.calls += 1;
    }
    await add();
    return true;
  }

  private monthTotal(organizationId: string, month: string): Promise<{ calls: number }> {
    const key = `${organizationId}\u0000${month}`;
    let total = this.monthTotals.get(key);
    if (!total) {
      // The month's day counters (at most 31 items): keys.callCounter(o, "YYYY-MM") is the prefix of each day's key.
      const prefix = keys.callCounter(organizationId, month);
      total = documentClient()
        .send(
          new QueryCommand({
            TableName: tableName(),
            KeyConditionExpression: "PK = :pk AND begins_with(SK, :month)",
            ExpressionAttributeValues: { ":pk": prefix.PK, ":month": prefix.SK },
          }),
        )
        .then((output) => ({ calls: (output.Items ?? []).reduce((sum, item) => sum + Number(item.calls ?? 0), 0) }));
      total.catch(() => this.monthTotals.delete(key));
      this.monthTotals.set(key, total);
    }
    return total;
  }
}
