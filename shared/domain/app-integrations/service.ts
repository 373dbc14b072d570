import type { Caller } from "#shared/domain/caller";
import { NotFoundError } from "#shared/domain/errors";
import { ID_PATTERN, newId } from "#shared/domain/ids";
import { formatIsoMicros } from "#shared/domain/time";
import { type CertificateUpload, readCertificateUpload } from "#shared/domain/app-integrations/certificate";
import type {
  AppIntegration,
  AppIntegrationCreateInput,
  AppIntegrationRecord,
  AppIntegrationUpdateInput,
  StoredCertificate,
} from "#shared/domain/app-integrations/schema";
import { logger } from "#shared/observability/powertools";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";

export interface AppIntegrationPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** Persistence port of the items (DynamoDB: shared/store/app-integration-store.ts). */
export interface AppIntegrationStore {
  /** Conditional on the key being new. */
  insert(record: AppIntegrationRecord): Promise<void>;
  find(organizationId: string, integrationId: string): Promise<{ record: AppIntegrationRecord; version: number } | undefined>;
  /** Conditional on `expectedVersion`: NotFoundError when gone, ConflictError when changed meanwhile. */
  replace(record: AppIntegrationRecord, expectedVersion: number): Promise<void>;
  remove(organizationId: string, integrationId: string, expectedVersion: number): Promise<boolean>;
  list(organizationId: string, page: { limit: number; cursor?: string | undefined }): Promise<AppIntegrationPage<AppIntegrationRecord>>;
}

/** Port of the certificate files (private S3 bucket: shared/blob/certificate-storage.ts). */
export interface CertificateStorage {
  /** Writes the file under a key no other upload uses (organization prefix, integration id, a fresh object id). */
  put(organizationId: string, integrationId: string, objectId: string, upload: CertificateUpload): Promise<StoredCertificate>;
  /** Removes that exact object (and version, in a versioned bucket). */
  remove(certificate: StoredCertificate): Promise<void>;
  /** A short-lived presigned GET URL. */
  downloadUrl(certificate: StoredCertificate): Promise<string>;
}

export function createAppIntegrationService(
  store: AppIntegrationStore,
  certificates: CertificateStorage,
  now: () => Date = () => new Date(),
) {
  async function view(record: AppIntegrationRecord): Promise<AppIntegration> {
    return {
      _id: record._id,
      integrationType: record.integrationType,
      azureAuthUrl: record.azureAuthUrl,
      azureCert: await certificates.downloadUrl(record.certificate),
      organizationId: record.organizationId,
      createdTime: record.createdTime,
      updatedTime: record.updatedTime,
    };
  }

  /** Ids that cannot exist are not looked up; another organization's id is simply not in the caller's partition. */
  async function findOwned(caller: Caller, integrationId: string) {
    const found = ID_PATTERN.test(integrationId) ? await store.find(caller.organizationId, integrationId) : undefined;
    if (!found) throw new NotFoundError();
    return found;
  }

  /**
   * Deleting a file must not turn a finished request into a failure (or hide the error that made
   * the request fail): a file left behind is logged with its key for clean-up.
   */
  async function discard(certificate: StoredCertificate, reason: string): Promise<void> {
    try {
      await certificates.remove(certificate);
    } catch (error) {
      logger.error("certificate object could not be deleted", {
        reason,
        objectKey: certificate.objectKey,
        versionId: certificate.versionId,
        error,
      });
    }
  }

  /** Writes the item after its file; if the item write fails the new file is removed again. */
  async function commitWithFile<T>(written: StoredCertificate | undefined, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (written) await discard(written, "item write failed");
      throw error;
    }
  }

  return {
    async create(caller: Caller, input: AppIntegrationCreateInput): Promise<AppIntegration> {
      const upload = readCertificateUpload(input.azureCert);
      const time = now();
      const integrationId = newId(time);
      const certificate = await certificates.put(caller.organizationId, integrationId, newId(time), upload);
      const record: AppIntegrationRecord = {
        _id: integrationId,
        integrationType: input.integrationType,
        azureAuthUrl: input.azureAuthUrl,
        certificate,
        organizationId: caller.organizationId,
        createdTime: formatIsoMicros(time),
        updatedTime: formatIsoMicros(time),
      };
      await commitWithFile(certificate, () => store.insert(record));
      return view(record);
    },

    /** Fields sent replace the stored ones; a new file replaces the old object, which is deleted once the item points to the new one. */
    async update(
      caller: Caller,
      integrationId: string,
      input: AppIntegrationUpdateInput,
      versions?: VersionCondition,
    ): Promise<AppIntegration> {
      const upload = input.azureCert ? readCertificateUpload(input.azureCert) : undefined;
      const existing = await findOwned(caller, integrationId);
      versions?.check(existing.version);
      const time = now();
      const newCertificate = upload ? await certificates.put(caller.organizationId, integrationId, newId(time), upload) : undefined;
      const record: AppIntegrationRecord = {
        ...existing.record,
        integrationType: input.integrationType ?? existing.record.integrationType,
        azureAuthUrl: input.azureAuthUrl ?? existing.record.azureAuthUrl,
        certificate: newCertificate ?? existing.record.certificate,
        updatedTime: formatIsoMicros(time),
      };
      await commitWithFile(newCertificate, () => writeUnder(versions, () => store.replace(record, existing.version), existing.version + 1));
      if (newCertificate) await discard(existing.record.certificate, "replaced by a new upload");
      return view(record);
    },

    async get(caller: Caller, integrationId: string, versions?: VersionCondition): Promise<AppIntegration> {
      const found = await findOwned(caller, integrationId);
      versions?.check(found.version);
      return view(found.record);
    },

    async list(caller: Caller, page: { limit: number; cursor?: string | undefined }): Promise<AppIntegrationPage<AppIntegration>> {
      const found = await store.list(caller.organizationId, page);
      return { items: await Promise.all(found.items.map(view)), nextCursor: found.nextCursor };
    },

    /** The item goes first: a failed file delete then leaves an orphan object (logged), never an item without its file. */
    async remove(caller: Caller, integrationId: string, versions?: VersionCondition): Promise<void> {
      const existing = await findOwned(caller, integrationId);
      versions?.check(existing.version);
      if (!(await writeUnder(versions, () => store.remove(caller.organizationId, integrationId, existing.version))))
        throw new NotFoundError();
      await discard(existing.record.certificate, "integration deleted");
    },
  };
}

export type AppIntegrationService = ReturnType<typeof createAppIntegrationService>;
