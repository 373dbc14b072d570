import * as z from "zod/mini";
import {
  webhookCreatedSchema,
  webhookCreateSchema,
  webhookListQuerySchema,
  webhookParamsSchema,
  webhookPatchSchema,
  webhookSchema,
} from "#shared/domain/webhooks/schema";
import { defineRoute } from "#shared/http/route";
import { component, pageQuery } from "#shared/domain/schemas";

const deliverySchema = z.object({
  deliveryId: z.string(),
  eventId: z.string().check(z.describe("The event's id, sent as `webhook-id`.")),
  eventType: z.string(),
  status: z
    .enum(["pending", "retrying", "delivered", "failed", "disabled", "dropped"])
    .check(
      z.describe(
        "pending: queued; retrying: an attempt failed, the next is due at nextRetryAt; delivered: a 2xx answer; failed: the schedule ran out; disabled: the receiver answered 410; dropped: the webhook was disabled before the attempt.",
      ),
    ),
  attempts: z.number(),
  lastResponseCode: z.nullable(z.number()),
  lastError: z.nullable(z.string()),
  nextRetryAt: z.nullable(z.string()),
  createdTime: z.string(),
  updatedTime: z.string(),
});

const tag = "Webhooks";

const webhookBody = <C extends number, T extends z.ZodMiniType>(code: C, data: T) =>
  z.object({ status: z.literal(true), code: z.literal(code), message: z.string(), data });

const signing =
  "Deliveries follow Standard Webhooks: a POST with the event as JSON and the headers `webhook-id` (the event's id, the same on every retry), `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the secret). See docs/api/webhooks.md.";

const ownerOnly =
  "Another user's subscription, and the caller's token is restricted to some hubs or lacks edit/webhook (failedCode webhook-403): only its creator or an organization-wide caller holding edit/webhook manages it.";

const scope =
  "A subscription receives what its creator may read: each event type needs its module's view permission (routing.result.* view/routing-result, routing.schedule.skipped view/routing-schedule, data-type.import.* view/data-type; 403 sys-035 naming the slug otherwise), and a creator whose token lists hubs receives only events of those hubs (`hubIds`, taken at create and at each change by the creator), never organization-wide ones (imports).";

export const webhookRoutes = {
  create: defineRoute({
    operationId: "createWebhook",
    method: "POST",
    path: "/webhook",
    handler: "functions/http/webhooks/create.ts",
    summary: "Subscribe a URL to events",
    description: `Answers the signing secret once (\`data.secret\`); it is stored encrypted and never shown again. ${scope} The URL must be https:// to a public address (the SSRF rules of external-api data types). An organization holds at most its plan's \`maxWebhooks\` subscriptions (10 by default; more: 409 webhook-409). Not idempotent by key: the answer carries the secret, which no idempotency record may keep; a client that lost the answer lists the webhooks and deletes the one it does not know the secret of.\n\n${signing}`,
    tag,
    permission: "add/webhook",
    body: webhookCreateSchema,
    responses: () => ({
      201: { description: "Created, with the secret", schema: webhookBody(201, webhookCreatedSchema) },
      409: { description: "The plan's cap of webhooks is reached (webhook-409).", failedCodes: ["webhook-409"] },
    }),
    grants: ["tableWrite", "webhookSecretSeal"],
  }),
  list: defineRoute({
    operationId: "listWebhooks",
    method: "GET",
    path: "/webhooks",
    handler: "functions/http/webhooks/list.ts",
    summary: "List the organization's webhooks",
    description: "Oldest first; never the secrets.",
    tag,
    permission: "view/webhook",
    query: webhookListQuerySchema,
    responses: () => ({
      200: {
        description: "A page of webhooks",
        schema: z.object({
          status: z.literal(true),
          code: z.literal(200),
          message: z.string(),
          data: z.array(webhookSchema),
          nextCursor: z.nullable(z.string()),
        }),
      },
    }),
    grants: ["tableRead"],
  }),
  get: defineRoute({
    operationId: "getWebhook",
    method: "GET",
    path: "/webhook/{webhookId}",
    handler: "functions/http/webhooks/get.ts",
    summary: "Read a webhook",
    tag,
    permission: "view/webhook",
    params: webhookParamsSchema,
    responses: () => ({ 200: { description: "The webhook", schema: webhookBody(200, webhookSchema) } }),
    grants: ["tableRead"],
    versioned: true,
  }),
  patch: defineRoute({
    operationId: "patchWebhook",
    method: "PATCH",
    path: "/webhook/{webhookId}",
    handler: "functions/http/webhooks/patch.ts",
    summary: "Change a webhook",
    description: `Fields sent replace the stored ones; \`enabled: true\` resumes a webhook disabled by a client or by a 410 answer. The secret does not change. Only its creator, or a caller whose token lists no hubs holding edit/webhook, may change it (403 webhook-403); events named need their view permission (403 sys-035). ${scope}`,
    tag,
    permission: "edit/webhook",
    params: webhookParamsSchema,
    body: webhookPatchSchema,
    responses: () => ({
      200: { description: "The updated webhook", schema: webhookBody(200, webhookSchema) },
      403: { description: ownerOnly, failedCodes: ["webhook-403"] },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  remove: defineRoute({
    operationId: "deleteWebhook",
    method: "DELETE",
    path: "/webhook/{webhookId}",
    handler: "functions/http/webhooks/delete.ts",
    summary: "Delete a webhook",
    description:
      "Deliveries already queued for it are dropped when they come up. Only its creator, or a caller whose token lists no hubs holding edit/webhook, may delete it (403 webhook-403).",
    tag,
    permission: "delete/webhook",
    params: webhookParamsSchema,
    responses: () => ({
      200: { description: "Deleted", schema: z.object({ status: z.literal(true), code: z.literal(200), message: z.string() }) },
      403: { description: ownerOnly, failedCodes: ["webhook-403"] },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  deliveries: defineRoute({
    operationId: "listWebhookDeliveries",
    method: "GET",
    path: "/webhook/{webhookId}/deliveries",
    handler: "functions/http/webhooks/deliveries.ts",
    summary: "List a webhook's deliveries",
    description:
      "Newest first, kept 30 days: each event sent to this webhook with its status, attempts, last response code and next retry.",
    tag,
    permission: "view/webhook",
    params: webhookParamsSchema,
    query: pageQuery({}),
    responses: () => ({
      200: {
        description: "A page of deliveries",
        schema: z.object({
          status: z.literal(true),
          code: z.literal(200),
          message: z.string(),
          data: z.array(deliverySchema),
          nextCursor: z.nullable(z.string()),
        }),
      },
    }),
    grants: ["tableRead"],
  }),
  test: defineRoute({
    operationId: "testWebhook",
    method: "POST",
    path: "/webhook/{webhookId}/test",
    handler: "functions/http/webhooks/test.ts",
    summary: "Send a test event",
    description:
      "Queues one `webhook.test` event (`data`: organizationId, webhookId) to this webhook, signed and retried like any event; it is not put on the event bus. Answers the delivery to follow in GET /webhook/{id}/deliveries.",
    tag,
    permission: "edit/webhook",
    params: webhookParamsSchema,
    responses: () => ({
      202: { description: "Queued", schema: webhookBody(202, z.object({ deliveryId: z.string(), eventId: z.string() })) },
    }),
    grants: ["tableWrite", "webhookQueueSend"],
  }),
};

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("WebhookDelivery", deliverySchema);
