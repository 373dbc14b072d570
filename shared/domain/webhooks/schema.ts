import * as z from "zod/mini";
import { component, clientFreeText, clientText, idSchema, pageQuery } from "#shared/domain/schemas";
import { eventTypes } from "#shared/domain/webhooks/events";

/**
 * Webhook subscriptions: an organization's URL that receives the events it names, signed with a
 * secret the API shows once (on create) and stores only sealed (shared/domain/webhooks/sealing.ts).
 */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500;

const urlField = z
  .string()
  .check(
    clientText,
    z.trim(),
    z.minLength(1, "must be an absolute https:// URL"),
    z.maxLength(MAX_WEBHOOK_URL_LENGTH, `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`),
    z.describe(
      "Where deliveries are POSTed: an absolute `https://` URL to a public address (no credentials, no private, link-local or loopback host; the address is checked again after DNS resolution at every delivery).",
    ),
  );

const eventsField = z.array(z.enum(eventTypes)).check(
  z.minLength(1, "name at least one event type"),
  z.maxLength(eventTypes.length),
  z.refine((events) => new Set(events).size === events.length, "must not repeat an event type"),
  z.describe(`Event types to receive: ${eventTypes.join(", ")}.`),
);

const descriptionField = z.nullable(
  z.string().check(clientFreeText, z.maxLength(MAX_WEBHOOK_DESCRIPTION_LENGTH), z.describe("Free text for your own records.")),
);

export const webhookCreateSchema = z.strictObject({
  url: urlField,
  events: eventsField,
  description: z.optional(descriptionField),
});
export type WebhookCreateInput = z.infer<typeof webhookCreateSchema>;

export const webhookPatchSchema = z
  .strictObject({
    url: z.optional(urlField),
    events: z.optional(eventsField),
    description: z.optional(descriptionField),
    enabled: z.optional(z.boolean().check(z.describe("false pauses deliveries; true resumes them (also after a receiver answered 410)."))),
  })
  .check(z.refine((patch) => Object.keys(patch).length > 0, { message: "send at least one of url, events, description, enabled" }));
export type WebhookPatch = z.infer<typeof webhookPatchSchema>;

export const webhookParamsSchema = z.strictObject({
  webhookId: z
    .string()
    .check(
      clientText,
      z.minLength(1),
      z.maxLength(64),
      z.describe("`_id` of the webhook; an unknown id (or one of another organization) is 404."),
    ),
});

export const webhookListQuerySchema = pageQuery({});

/** The stored item: the secret only sealed. */
export const webhookRecordSchema = z.object({
  _id: idSchema,
  organizationId: z.string(),
  url: z.string(),
  events: z.array(z.enum(eventTypes)),
  description: z.nullable(z.string()),
  enabled: z.boolean(),
  disabledReason: z.nullable(z.string()),
  sealedSecret: z.string(),
  createdBy: z.optional(
    z.nullable(z.string().check(z.describe("The user (token `sub`) who created it; null for a subscription older than this field."))),
  ),
  hubIds: z.optional(
    z
      .array(z.string())
      .check(
        z.describe(
          "The hubs whose events it receives: its owner's token hubs when created or last changed by its owner; empty (or absent) = the whole organization, including organization-wide events (imports).",
        ),
      ),
  ),
  createdTime: z.string(),
  updatedTime: z.string(),
});
export type WebhookRecord = z.infer<typeof webhookRecordSchema>;

/** What clients see: never the secret (only the create answer carries it, once). */
export const webhookSchema = z.extend(z.omit(webhookRecordSchema, { sealedSecret: true }), {
  disabledReason: z.nullable(
    z.string().check(z.describe("Why deliveries stopped, e.g. the receiver answered 410 Gone; null while enabled.")),
  ),
});
export type Webhook = z.infer<typeof webhookSchema>;

export const webhookCreatedSchema = z.extend(webhookSchema, {
  secret: z
    .string()
    .check(
      z.describe(
        "The signing secret (`whsec_…`, Standard Webhooks). Shown only in this answer: store it now; it is kept encrypted and never shown again.",
      ),
    ),
});
export type WebhookCreated = z.infer<typeof webhookCreatedSchema>;

export function webhookView(record: WebhookRecord): Webhook {
  const { sealedSecret: _sealed, ...view } = record;
  return view;
}

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("Webhook", webhookSchema);
component("WebhookCreated", webhookCreatedSchema);
component("WebhookInput", webhookCreateSchema);
component("WebhookPatch", webhookPatchSchema);
