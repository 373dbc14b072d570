import { describe, expect, it } from "vitest";
import type { AppIntegrationRecord, StoredCertificate } from "#shared/domain/app-integrations/schema";
import { type AppIntegrationStore, type CertificateStorage, createAppIntegrationService } from "#shared/domain/app-integrations/service";
import type { Caller } from "#shared/domain/caller";
import { ConflictError, NotFoundError, ValidationError } from "#shared/domain/errors";
import { selfSignedCertificate } from "#test/fixtures/app-integrations/self-signed-certificate";

/**
 * The service's ordering guarantees with in-memory ports: the file is written before the item,
 * removed again when the item write fails, and an old file is deleted only after the item points
 * to its replacement.
 */
function memoryPorts() {
  const items = new Map<string, { record: AppIntegrationRecord; version: number }>();
  const objects = new Map<string, Buffer>();
  const events: string[] = [];
  const failures = { insert: false, replace: false, objectRemove: false };
  const itemKey = (organizationId: string, id: string) => `${organizationId}/${id}`;

  const store: AppIntegrationStore = {
    async insert(record) {
      events.push("item:insert");
      if (failures.insert) throw new Error("table unavailable");
      items.set(itemKey(record.organizationId, record._id), { record, version: 1 });
    },
    async find(organizationId, id) {
      return items.get(itemKey(organizationId, id));
    },
    async replace(record, expectedVersion) {
      events.push("item:replace");
      if (failures.replace) throw new ConflictError("changed meanwhile");
      const current = items.get(itemKey(record.organizationId, record._id));
      if (!current) throw new NotFoundError();
      if (current.version !== expectedVersion) throw new ConflictError("changed meanwhile");
      items.set(itemKey(record.organizationId, record._id), { record, version: expectedVersion + 1 });
    },
    async remove(organizationId, id, expectedVersion) {
      events.push("item:remove");
      const current = items.get(itemKey(organizationId, id));
      if (!current || current.version !== expectedVersion) return false;
      items.delete(itemKey(organizationId, id));
      return true;
    },
    async list(organizationId) {
      return {
        items: [...items.values()].filter((entry) => entry.record.organizationId === organizationId).map((entry) => entry.record),
        nextCursor: null,
      };
    },
  };

  const certificates: CertificateStorage = {
    async put(organizationId, integrationId, objectId, upload) {
      const objectKey = `org/${organizationId}/app-integrations/${integrationId}/${objectId}/${upload.fileName}`;
      events.push(`object:put ${objectKey}`);
      objects.set(objectKey, upload.content);
      return {
        objectKey,
        fileName: upload.fileName,
        contentType: upload.contentType,
        format: upload.format,
        sizeBytes: upload.content.length,
        sha256: upload.sha256,
      };
    },
    async remove(certificate: StoredCertificate) {
      events.push(`object:remove ${certificate.objectKey}`);
      if (failures.objectRemove) throw new Error("s3 unavailable");
      objects.delete(certificate.objectKey);
    },
    async downloadUrl(certificate) {
      return `https://files.example/${certificate.objectKey}?signed`;
    },
  };
  return { store, certificates, items, objects, events, failures };
}

const caller: Caller = { userId: "u1", organizationId: "org-a", hubIds: [], permissions: new Set(), permissionDetails: [] };
const otherCaller: Caller = { ...caller, organizationId: "org-b" };
const pemFile = (name = "sso.pem") => ({
  filename: name,
  contentType: "application/x-pem-file",
  content: Buffer.from(selfSignedCertificate().pem),
});
const createInput = () => ({ integrationType: "azure" as const, azureAuthUrl: "https://login.example.com/sso", azureCert: pemFile() });
const fixedClock = (iso: string) => () => new Date(iso);

describe("Service: app integrations", () => {
  describe("Method: create", () => {
    it("writes the file, then the item, and answers a download URL with ISO microsecond times", async () => {
      // Prepare
      const ports = memoryPorts();
      const service = createAppIntegrationService(ports.store, ports.certificates, fixedClock("2026-11-22T09:25:03.123Z"));
      // Act
      const created = await service.create(caller, createInput());
      // Assess
      expect(ports.events.map((event) => event.split(" ")[0])).toEqual(["object:put", "item:insert"]);
      expect(created).toMatchObject({
        organizationId: "org-a",
        createdTime: "2026-11-22T09:25:03.123000Z",
        updatedTime: "2026-11-22T09:25:03.123000Z",
      });
      expect(created.azureCert).toMatch(
        /^https:\/\/files\.example\/org\/org-a\/app-integrations\/[0-9a-f]{24}\/[0-9a-f]{24}\/sso\.pem\?signed$/,
      );
      expect(created).not.toHaveProperty("certificate");
    });

    it("removes the new file again when the item write fails, and reports the original error", async () => {
      const ports = memoryPorts();
      ports.failures.insert = true;
      const service = createAppIntegrationService(ports.store, ports.certificates);
      await expect(service.create(caller, createInput())).rejects.toThrow("table unavailable");
      expect(ports.objects.size).toBe(0);
      expect(ports.items.size).toBe(0);
      expect(ports.events.map((event) => event.split(" ")[0])).toEqual(["object:put", "item:insert", "object:remove"]);
    });

    it("keeps the original error when removing the file fails too", async () => {
      const ports = memoryPorts();
      ports.failures.insert = true;
      ports.failures.objectRemove = true;
      const service = createAppIntegrationService(ports.store, ports.certificates);
      await expect(service.create(caller, createInput())).rejects.toThrow("table unavailable");
    });

    it("validates the certificate before touching storage", async () => {
      const ports = memoryPorts();
      const service = createAppIntegrationService(ports.store, ports.certificates);
      await expect(service.create(caller, { ...createInput(), azureCert: { ...pemFile(), content: Buffer.from("nope") } })).rejects.toThrow(
        ValidationError,
      );
      expect(ports.events).toEqual([]);
    });
  });

  describe("Method: update", () => {
    it("deletes the old file only after the item points to the new one", async () => {
      const ports = memoryPorts();
      const service = createAppIntegrationService(ports.store, ports.certificates);
      const created = await service.create(caller, createInput());
      const oldKey = [...ports.objects.keys()][0];
      ports.events.length = 0;

      const updated = await service.update(caller, created._id, { azureCert: pemFile("rotated.pem") });

      const newKey = [...ports.objects.keys()][0];
      expect(ports.objects.size).toBe(1);
      expect(newKey).not.toBe(oldKey);
      expect(ports.events).toEqual([`object:put ${newKey}`, "item:replace", `object:remove ${oldKey}`]);
      expect(updated.azureCert).toContain("rotated.pem");
      expect(updated.createdTime).toBe(created.createdTime);
    });

    it("keeps the old file and removes the new one when the item write loses a race", async () => {
      const ports = memoryPorts();
      const service = createAppIntegrationService(ports.store, ports.certificates);
      const created = await service.create(caller, createInput());
      const oldKey = [...ports.objects.keys()][0];
      ports.failures.replace = true;

      await expect(service.update(caller, created._id, { azureCert: pemFile("rotated.pem") })).rejects.toThrow(ConflictError);
      expect([...ports.objects.keys()]).toEqual([oldKey]);
      expect(ports.items.get(`org-a/${created._id}`)?.record.certificate.objectKey).toBe(oldKey);
    });

    it("changes text fields without touching files", async () => {
      const ports = memoryPorts();
      const service = createAppIntegrationService(ports.store, ports.certificates);
      const created = await service.create(caller, createInput());
      ports.events.length = 0;
      const updated = await service.update(caller, created._id, { azureAuthUrl: "https://other.example.com/" });
      expect(updated.azureAuthUrl).toBe("https://other.example.com/");
      expect(ports.events).toEqual(["item:replace"]);
    });

    it("answers 404 for another organization's id or an id that cannot exist, writing nothing", async () => {
      const ports = memoryPorts();
      const service = createAppIntegrationService(ports.store, ports.certificates);
      const created = await service.create(caller, createInput());
      ports.events.length = 0;
      await expect(service.update(otherCaller, created._id, { azureCert: pemFile() })).rejects.toThrow(NotFoundError);
      await expect(service.update(caller, "APPINT#x", { azureAuthUrl: "https://a.example.com" })).rejects.toThrow(NotFoundError);
      expect(ports.events).toEqual([]);
    });
  });

  describe("Method: remove", () => {
    it("deletes the item, then its file", async () => {
      const ports = memoryPorts();
      const service = createAppIntegrationService(ports.store, ports.certificates);
      const created = await service.create(caller, createInput());
      const key = [...ports.objects.keys()][0];
      ports.events.length = 0;
      await service.remove(caller, created._id);
      expect(ports.events).toEqual(["item:remove", `object:remove ${key}`]);
      expect(ports.objects.size).toBe(0);
      await expect(service.get(caller, created._id)).rejects.toThrow(NotFoundError);
    });

    it("succeeds even when the file cannot be deleted (the orphan is logged, the item is gone)", async () => {
      const ports = memoryPorts();
      const service = createAppIntegrationService(ports.store, ports.certificates);
      const created = await service.create(caller, createInput());
      ports.failures.objectRemove = true;
      await service.remove(caller, created._id);
      expect(ports.items.size).toBe(0);
    });
  });
});
