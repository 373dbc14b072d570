import { successBodySchema } from "#shared/domain/schemas";
import { MAX_USAGE_RANGE_DAYS, usageQuerySchema, usageReportSchema } from "#shared/domain/usage/schema";
import { defineRoute } from "#shared/http/route";

export const usageRoutes = {
  get: defineRoute({
    operationId: "getUsage",
    method: "GET",
    path: "/usage",
    handler: "functions/http/usage/get.ts",
    summary: "Read your organization's usage (calls, routing runs and webhook attempts per day)",
    description: [
      `Per UTC day from \`from\` to \`to\` (both included, YYYY-MM-DD, at most ${MAX_USAGE_RANGE_DAYS} days; 400 otherwise): API calls, routing runs (count and optimizer seconds) and webhook delivery attempts, with totals. Only the caller's organization.`,
      "Routing runs are metered by the run worker: one item per run whose optimizer produced a result (or failed on its last attempt), on the UTC day the run started; a redelivered run is never counted twice. Runs skipped before the optimizer (no visits, no vehicles, quota) are not metered.",
      "Webhook delivery attempts (`webhookAttempts`) are counted by the delivery worker: every POST to one of the organization's webhook URLs, retries and test events included, on the UTC day it was made.",
      "Calls: locally the local gateway counts every admitted call (`callsSource: local-gateway`). On AWS the API Gateway usage plans count them (`callsSource: usage-plan`): the calls of the organization's key under every usage plan it was on during the range, so calls made before a plan change count; `calls: null` for an organization that is not enrolled (it shares a key). Usage-plan counts are not real time: a day's figure may still grow for a while.",
    ].join("\n\n"),
    tag: "Usage",
    permission: "view/usage",
    query: usageQuerySchema,
    responses: () => ({ 200: { description: "The organization's usage", schema: successBodySchema(usageReportSchema) } }),
    grants: ["tableRead", "usagePlanRead"],
  }),
};
