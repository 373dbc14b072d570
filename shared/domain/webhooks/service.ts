import { addressClass, providerUrlProblem } from "#shared/domain/data-types/provider-url";
import { ConflictError, ForbiddenError, MissingPermissionError, NotFoundError, ValidationError } from "#shared/domain/errors";
import type { Caller } from "#shared/domain/caller";
import { newId } from "#shared/domain/ids";
import { formatIsoMicros } from "#shared/domain/time";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";
import { type EventType, eventReadPermission } from "#shared/domain/webhooks/events";
import { type SecretSealer, sealingContext } from "#shared/domain/webhooks/sealing";
import { newSigningSecret } from "#shared/domain/webhooks/signing";
import {
  type Webhook,
  type WebhookCreated,
  type WebhookCreateInput,
  type WebhookPatch,
  type WebhookRecord,
  webhookView,
} from "#shared/domain/webhooks/schema";

export interface StoredWebhook {
  record: WebhookRecord;
  version: number;
}

/** Persistence port (shared/store/webhook-store.ts). */
export interface WebhookStore {
  /** Inserts the subscription unless the organization holds `cap` already (false); exact under concurrent creates. */
  insertWithinCap(record: WebhookRecord, cap: number): Promise<boolean>;
  find(organizationId: string, webhookId: string): Promise<StoredWebhook | undefined>;
  replace(record: WebhookRecord, expectedVersion: number): Promise<void>;
  remove(organizationId: string, webhookId: string, expectedVersion: number): Promise<boolean>;
  list(
    organizationId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<{ items: WebhookRecord[]; nextCursor: string | null }>;
}

export interface WebhookServiceOptions {
  sealer: () => SecretSealer;
  /** Local only (WEBHOOKS_ALLOW_LOOPBACK): admits http:// and https:// URLs to loopback receivers. */
  allowLoopback: () => boolean;
  /** Most subscriptions the organization's plan allows. */
  maxWebhooks: (organizationId: string) => Promise<number>;
  now?: () => Date;
}

/**
 * Why `text` cannot be a webhook URL: the SSRF rules of external-api data types (no credentials,
 * no private, link-local or reserved literal address, no loopback), plus https only — except a
 * loopback receiver when the local switch allows it.
 */
export function webhookUrlProblem(text: string, allowLoopback: boolean): string | undefined {
  const problem = providerUrlProblem(text, { allowLoopback });
  if (problem === LOOPBACK_PROBLEM) return `${problem} ${LOOPBACK_SWITCH_HINT}`;
  if (problem)
    return problem.replace("http:// or https://", "https://").replace("send them as providerConfig.key", "the payload is signed instead");
  const url = new URL(text);
  if (url.protocol === "https:") return undefined;
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  const loopback = addressClass(host) === "loopback" || host === "localhost" || host.endsWith(".localhost");
  if (allowLoopback && loopback) return undefined;
  return loopback ? `must be an absolute https:// URL ${LOOPBACK_SWITCH_HINT}` : "must be an absolute https:// URL";
}

const LOOPBACK_PROBLEM = "must not point at a loopback address";
/** The refusal names the switch that admits a loopback receiver on a local stack (never set on AWS). */
const LOOPBACK_SWITCH_HINT = "(a receiver on this machine needs a local stack started with WEBHOOKS_ALLOW_LOOPBACK=true)";

/** A subscription names only event types whose module the caller may read (403 sys-035 naming the first slug it lacks). */
function checkEventRights(caller: Caller, events: readonly EventType[]): void {
  for (const type of events) {
    const slug = eventReadPermission[type];
    if (!caller.permissions.has(slug)) throw new MissingPermissionError(slug);
  }
}

/**
 * Who may change or delete a subscription: its creator, or a caller the token restricts to no hub
 * holding `edit/webhook` (an organization's administrator). A subscription older than the creator
 * field is organization-wide, so only such a caller manages it.
 */
export function mayManageWebhook(caller: Caller, record: WebhookRecord): boolean {
  if (record.createdBy && record.createdBy === caller.userId) return true;
  return caller.hubIds.length === 0 && caller.permissions.has("edit/webhook");
}

export const notWebhookOwnerError = () =>
  new ForbiddenError(
    "Only the webhook's creator, or a token without a hub restriction holding edit/webhook, may change or delete it.",
    "webhook-403",
  );

export function createWebhookService(store: WebhookStore, options: WebhookServiceOptions) {
  const now = options.now ?? (() => new Date());

  function checkUrl(url: string): void {
    const problem = webhookUrlProblem(url, options.allowLoopback());
    if (problem) throw ValidationError.single("url", `url ${problem}`);
  }

  async function findOwned(caller: Caller, webhookId: string): Promise<StoredWebhook> {
    const found = await store.find(caller.organizationId, webhookId);
    if (!found) throw new NotFoundError();
    return found;
  }

  return {
    /** The secret is made here, sealed into the item and answered once. */
    async create(caller: Caller, input: WebhookCreateInput): Promise<WebhookCreated> {
      checkUrl(input.url);
      checkEventRights(caller, input.events);
      const cap = await options.maxWebhooks(caller.organizationId);
      const atCap = () =>
        new ConflictError(`The organization has ${cap} webhooks, the most its plan allows; delete one first.`, "webhook-409");
      const time = now();
      const webhookId = newId(time);
      const secret = newSigningSecret();
      const record: WebhookRecord = {
        _id: webhookId,
        organizationId: caller.organizationId,
        url: input.url,
        events: input.events,
        description: input.description ?? null,
        enabled: true,
        disabledReason: null,
        sealedSecret: await options.sealer().seal(secret, sealingContext(caller.organizationId, webhookId)),
        createdBy: caller.userId,
        hubIds: [...caller.hubIds],
        createdTime: formatIsoMicros(time),
        updatedTime: formatIsoMicros(time),
      };
      if (!(await store.insertWithinCap(record, cap))) throw atCap();
      return { ...webhookView(record), secret };
    },

    async get(caller: Caller, webhookId: string, versions?: VersionCondition): Promise<Webhook> {
      const found = await findOwned(caller, webhookId);
      versions?.check(found.version);
      return webhookView(found.record);
    },

    async list(caller: Caller, page: { limit: number; cursor?: string | undefined }) {
      const found = await store.list(caller.organizationId, page);
      return { items: found.items.map(webhookView), nextCursor: found.nextCursor };
    },

    async patch(caller: Caller, webhookId: string, patch: WebhookPatch, versions?: VersionCondition): Promise<Webhook> {
      if (patch.url !== undefined) checkUrl(patch.url);
      if (patch.events !== undefined) checkEventRights(caller, patch.events);
      const existing = await findOwned(caller, webhookId);
      if (!mayManageWebhook(caller, existing.record)) throw notWebhookOwnerError();
      versions?.check(existing.version);
      const byOwner = existing.record.createdBy === caller.userId;
      const enabled = patch.enabled ?? existing.record.enabled;
      const record: WebhookRecord = {
        ...existing.record,
        url: patch.url ?? existing.record.url,
        events: patch.events ?? existing.record.events,
        description: patch.description === undefined ? existing.record.description : patch.description,
        enabled,
        disabledReason: enabled ? null : patch.enabled === false ? "disabled by a client" : existing.record.disabledReason,
        // The owner's hub scope is taken again at each change by the owner (an administrator's change keeps it).
        ...(byOwner ? { hubIds: [...caller.hubIds] } : {}),
        updatedTime: formatIsoMicros(now()),
      };
      await writeUnder(versions, () => store.replace(record, existing.version), existing.version + 1);
      return webhookView(record);
    },

    async remove(caller: Caller, webhookId: string, versions?: VersionCondition): Promise<void> {
      const existing = await findOwned(caller, webhookId);
      if (!mayManageWebhook(caller, existing.record)) throw notWebhookOwnerError();
      versions?.check(existing.version);
      if (!(await writeUnder(versions, () => store.remove(caller.organizationId, webhookId, existing.version)))) throw new NotFoundError();
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
