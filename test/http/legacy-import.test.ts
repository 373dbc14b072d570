import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { ChangeMessageVisibilityCommand, type Message, SQSClient } from "@aws-sdk/client-sqs";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { createLegacyImportHandler, handler as importWorker } from "#functions/jobs/legacy-import";
import { legacyImportDependencies } from "#shared/app/legacy-import";
import { recordService } from "#shared/app/records";
import { s3ImportSource } from "#shared/blob/import-source";
import { appConfig } from "#shared/config/env";
import { createLegacyImportService } from "#shared/domain/data-types/import-service";
import { EXPORT_CONTENT_TYPE } from "#shared/domain/data-types/legacy-import";
import { sqsImportQueue } from "#shared/queue/import-queue";
import { dynamoDataTypeStore } from "#shared/store/data-type-store";
import { dynamoImportStateStore } from "#shared/store/import-state-store";
import { documentClient, tableName } from "#shared/store/dynamo";
import { importRecordsUsed } from "#shared/store/import-quota-store";
import { keys, objectKeys } from "#shared/store/keys";
import { acknowledge, receive, sqsEvent } from "#test/integration/runs/run-fixtures";
import { postExport } from "#test/support/export-upload";
import { type ApiClient, newTenant } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";
import { resetStrictDynamoDb } from "#test/support/strict-dynamodb";

/**
 * Import from the earlier version (docs/api/legacy-import.md) through the local stack: the export is
 * POSTed through the presigned upload form (the local S3 holds the form to its policy as S3 does:
 * local/s3-front.ts; the import's own HeadObject check is reached by storing an object past the form,
 * `storeDirectly`), POST /data-type/import answers 202 with the type
 * locked, and the test hands the import queue's messages to the import worker, as the SQS event
 * source does on AWS (the test stack runs no poller, like the routing-run tests).
 */
const sqs = new SQSClient({});
const s3 = new S3Client({ forcePathStyle: true });

/**
 * The import worker with pages of 50 records, not 500: redelivery, rollback and the charge are the
 * same steps at any page size, and the tests of them write a tenth of the records. The first test
 * imports at the production page size.
 */
const SMALL_PAGE = 50;
const smallPageWorker = createLegacyImportHandler(() =>
  createLegacyImportService({ ...legacyImportDependencies, pageRecords: SMALL_PAGE }),
);

const legacyType = (name: string) => ({
  name,
  fields: [
    { id: "dataId", title: "Code", type: "primaryKey", required: true, unique: true, searchable: true, primaryKey: true },
    { id: "label", title: "Label", type: "string", required: true, searchable: true },
    { id: "weight", title: "Weight", type: "number", required: false, validations: { min: 0 } },
    { id: "size", title: "Size", type: "option", required: false, optionData: ["S", "M", "L"] },
  ],
  commonData: true,
});

function exportText(name: string, count: number, options: { badLine?: number; announced?: number } = {}): string {
  const header = {
    format: "field-operations-export",
    formatVersion: 2,
    dataType: legacyType(name),
    recordCount: options.announced ?? count,
  };
  const lines = [JSON.stringify(header)];
  for (let i = 1; i <= count; i++) {
    const line = i + 1;
    const weight = line === options.badLine ? "heavy" : i % 50;
    lines.push(
      JSON.stringify({ dataId: `SKU-${String(i).padStart(5, "0")}`, values: { label: `Item ${i}`, weight, size: ["S", "M", "L"][i % 3] } }),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** POST /data-type/import/upload, then the export through its presigned form; `fields` overrides form fields. */
async function upload(api: ApiClient, text: string, fields: Record<string, string> = {}): Promise<string> {
  const target = await api.post("/data-type/import/upload", undefined);
  expect(target.status, JSON.stringify(target.body)).toBe(201);
  expect(target.body.data).toMatchObject({
    method: "POST",
    contentType: EXPORT_CONTENT_TYPE,
    uploadId: expect.stringMatching(/^[0-9a-f]{24}$/),
  });
  const posted = await postExport(target.body.data, text, fields);
  expect(posted.status).toBe(204);
  return target.body.data.uploadId;
}

/**
 * An upload id whose object is stored with the SDK, not the form: what the import's own checks
 * (content type, size) meet when an object reaches the key past the form's policy.
 */
async function storeDirectly(api: ApiClient, organizationId: string, body: string, contentType = EXPORT_CONTENT_TYPE): Promise<string> {
  const target = await api.post("/data-type/import/upload", undefined);
  expect(target.status, JSON.stringify(target.body)).toBe(201);
  const uploadId: string = target.body.data.uploadId;
  await s3.send(
    new PutObjectCommand({
      Bucket: appConfig().BUCKET_NAME,
      Key: objectKeys.legacyExport(organizationId, uploadId),
      Body: Buffer.from(body),
      ContentType: contentType,
    }),
  );
  return uploadId;
}

/** The S3 error code of a refused form POST. */
async function s3ErrorCode(response: Response): Promise<string | undefined> {
  return /<Code>([^<]+)<\/Code>/.exec(await response.text())?.[1];
}

async function startImport(api: ApiClient, text: string, mode: "copy" | "move") {
  const uploadId = await upload(api, text);
  const response = await api.post("/data-type/import", { mode, source: { uploadId } });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return { uploadId, dataType: response.body.data_type };
}

/** This data type's import messages now in the queue, lowest step first (others are made visible again at once). */
async function importMessages(dataTypeId: string): Promise<Message[]> {
  const queueUrl = appConfig().IMPORT_QUEUE_URL;
  for (let attempt = 0; attempt < 50; attempt++) {
    const mine: Message[] = [];
    for (const message of await receive(sqs, queueUrl)) {
      if (JSON.parse(message.Body as string).dataTypeId === dataTypeId) mine.push(message);
      else await makeVisible(message);
    }
    if (mine.length > 0) return mine.sort((a, b) => stepOf(a) - stepOf(b));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return [];
}

const stepOf = (message: Message) => JSON.parse(message.Body as string).step as number;
const makeVisible = (message: Message) =>
  sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: appConfig().IMPORT_QUEUE_URL,
      ReceiptHandle: message.ReceiptHandle as string,
      VisibilityTimeout: 0,
    }),
  );

/**
 * Delivers this import's lowest-step message to the worker alone (batch size 1, as on AWS), deletes
 * it when the worker acknowledged it, else makes it visible again at once; answers its step.
 */
async function deliverNext(dataTypeId: string, worker = importWorker): Promise<number | undefined> {
  const [message, ...others] = await importMessages(dataTypeId);
  for (const other of others) await makeVisible(other);
  if (!message) return undefined;
  const response = await worker(sqsEvent([message]));
  await acknowledge(sqs, appConfig().IMPORT_QUEUE_URL, [message], response);
  if (response.batchItemFailures.length > 0) await makeVisible(message);
  return stepOf(message);
}

async function importOf(api: ApiClient, dataTypeId: string) {
  const response = await api.get(`/data-type/${dataTypeId}`);
  expect(response.status).toBe(200);
  return response.body.data_type;
}

/** Runs the worker until the import is done or failed (or no message is left). */
async function runImport(api: ApiClient, dataTypeId: string, worker = importWorker) {
  for (let i = 0; i < 200; i++) {
    const dataType = await importOf(api, dataTypeId);
    if (dataType.import.status === "done" || dataType.import.status === "failed") return dataType;
    if ((await deliverNext(dataTypeId, worker)) === undefined) return dataType;
  }
  throw new Error("import did not end");
}

async function countRecords(api: ApiClient, dataTypeId: string): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const response = await api.get(`/data?dataTypeId=${dataTypeId}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    count += response.body.data.length;
    cursor = response.body.nextCursor;
  } while (cursor);
  return count;
}

async function exportExists(organizationId: string, uploadId: string): Promise<boolean> {
  try {
    await s3.send(new GetObjectCommand({ Bucket: appConfig().BUCKET_NAME, Key: objectKeys.legacyExport(organizationId, uploadId) }));
    return true;
  } catch (error) {
    if ((error as Error).name === "NoSuchKey") return false;
    throw error;
  }
}

describe("POST /data-type/import: import from the earlier version", () => {
  it("imports 1,500 records in pages of 500 while the type is locked (writes 409, reads work), then unlocks with the no-space rule and the primaryKey field, and moves the export", {
    timeout: 600_000,
  }, async () => {
    const { api, organizationId } = newTenant();
    const { uploadId, dataType } = await startImport(api, exportText("Legacy products", 1500), "move");
    expect(dataType).toMatchObject({
      name: "Legacy products",
      locked: true,
      import: { status: "queued", mode: "move", processed: 0, total: 1500, errors: [] },
    });
    expect(dataType.fields.map((field: { id: string; type: string }) => [field.id, field.type])).toEqual([
      ["dataId", "primaryKey"],
      ["label", "text"],
      ["weight", "number"],
      ["size", "option"],
    ]);
    const id = dataType._id;

    // While locked: data type writes 409 dt-003, record writes 409 data-004; reads work.
    const record = { dataTypeId: id, dataId: "NEW-1", label: "New" };
    const legacyRecord = (dataId: string) => api.get(`/data/type/${encodeURIComponent("Legacy products")}/${encodeURIComponent(dataId)}`);
    expect(refusal(await api.post("/data", record))).toEqual({ status: 409, failedCode: "data-004" });
    expect(refusal(await legacyRecord("NEW-1"))).toEqual({ status: 404, failedCode: "sys-404" });
    const { _id: _ignored, ...body } = dataType;
    const lockedType = (await api.get(`/data-type/${id}`)).body;
    for (const response of [
      await api.put(`/data-type/${id}`, body),
      await api.patch(`/data-type/${id}`, { name: "Renamed" }),
      await api.delete(`/data-type/${id}`),
    ]) {
      expect(refusal(response)).toEqual({ status: 409, failedCode: "dt-003" });
    }
    expect((await api.get(`/data-type/${id}`)).body).toEqual(lockedType);

    // Step 0: the first page of 500.
    expect(await deliverNext(id)).toBe(0);
    const running = await importOf(api, id);
    expect(running).toMatchObject({ locked: true, import: { status: "running", processed: 500, total: 1500 } });
    expect(await countRecords(api, id)).toBe(500);
    expect((await api.get(`/data/type/${encodeURIComponent("Legacy products")}/SKU-00001`)).status).toBe(200);
    expect((await api.put(`/data/type/${encodeURIComponent("Legacy products")}/SKU-00001`, { label: "Changed" })).body.failedCode).toBe(
      "data-004",
    );
    expect((await api.delete(`/data/type/${encodeURIComponent("Legacy products")}/SKU-00001`)).body.failedCode).toBe("data-004");

    const done = await runImport(api, id);
    expect(done).toMatchObject({ locked: false, import: { status: "done", mode: "move", processed: 1500, total: 1500, errors: [] } });
    expect(done.fields[0]).toMatchObject({ id: "dataId", type: "primaryKey" });
    expect(await countRecords(api, id)).toBe(1500);
    const sample = await api.get(`/data/type/${encodeURIComponent("Legacy products")}/SKU-01499`);
    expect(sample.body.data).toMatchObject({ dataId: "SKU-01499", label: "Item 1499", weight: 1499 % 50, size: ["S", "M", "L"][1499 % 3] });
    expect(await exportExists(organizationId, uploadId)).toBe(false);

    // Unlocked: the no-space title rule holds until the type is first saved here.
    expect(refusal(await api.post("/data", { dataTypeId: id, dataId: "two words", label: "x" }))).toEqual({
      status: 400,
      failedCode: "sys-400",
    });
    expect(refusal(await legacyRecord("two words"))).toEqual({ status: 404, failedCode: "sys-404" });
    expect((await api.post("/data", { dataTypeId: id, dataId: "one-word", label: "x" })).status).toBe(201);
    const { _id, import: _import, ...saved } = done;
    const resaved = await api.put(`/data-type/${id}`, saved);
    expect(resaved.status, JSON.stringify(resaved.body)).toBe(200);
    expect(resaved.body.data_type.fields[0]).toMatchObject({ id: "dataId", type: "primaryKey" });
    expect((await api.post("/data", { dataTypeId: id, dataId: "two words", label: "x" })).status).toBe(201);
  });

  it("runs a redelivered page once: a duplicate delivery is acknowledged, and a page whose commit was lost rewrites nothing and counts once", async () => {
    const { api, organizationId } = newTenant();
    const { uploadId, dataType } = await startImport(api, exportText("Redelivered", 120), "copy");
    const id = dataType._id;
    const queueUrl = appConfig().IMPORT_QUEUE_URL;

    // The same message delivered twice (SQS at-least-once): the second delivery changes nothing.
    const [first] = await importMessages(id);
    const message = first as Message;
    await smallPageWorker(sqsEvent([message]));
    expect((await importOf(api, id)).import).toMatchObject({ status: "running", processed: 50 });
    const again = await smallPageWorker(sqsEvent([message]));
    expect(again.batchItemFailures).toEqual([]);
    await acknowledge(sqs, queueUrl, [message], again);
    expect((await importOf(api, id)).import).toMatchObject({ processed: 50 });
    expect(await countRecords(api, id)).toBe(50);

    // A worker that writes page 2 and dies before committing its step: the redelivery finds its records and counts them once.
    let crashes = 1;
    const crashingWorker = createLegacyImportHandler(() =>
      createLegacyImportService({
        dataTypes: dynamoDataTypeStore,
        imports: {
          find: dynamoImportStateStore.find,
          advance: async (...args) => {
            if (crashes-- > 0) throw new Error("worker died before committing the step");
            return dynamoImportStateStore.advance(...args);
          },
        },
        source: s3ImportSource,
        queue: sqsImportQueue,
        records: recordService,
        pageRecords: SMALL_PAGE,
      }),
    );
    expect(await deliverNext(id, crashingWorker)).toBe(1);
    expect(await countRecords(api, id)).toBe(100);
    expect((await importOf(api, id)).import).toMatchObject({ status: "running", processed: 50 });
    expect(await deliverNext(id, crashingWorker)).toBe(1);
    expect((await importOf(api, id)).import).toMatchObject({ processed: 100 });

    const done = await runImport(api, id, smallPageWorker);
    expect(done).toMatchObject({ locked: false, import: { status: "done", processed: 120, total: 120 } });
    expect(await countRecords(api, id)).toBe(120);
    // copy keeps the uploaded export.
    expect(await exportExists(organizationId, uploadId)).toBe(true);
  });

  it("fails mid-way on a bad record: the records written so far are removed, the type unlocks as failed with the line, and the export is kept", async () => {
    const { api, organizationId } = newTenant();
    const { uploadId, dataType } = await startImport(api, exportText("Broken", 60, { badLine: 56 }), "move");
    const id = dataType._id;
    expect(await deliverNext(id, smallPageWorker)).toBe(0);
    expect(await countRecords(api, id)).toBe(50);
    expect(await deliverNext(id, smallPageWorker)).toBe(1);
    const rollingBack = await importOf(api, id);
    expect(rollingBack.locked).toBe(true);
    expect(rollingBack.import.status).toBe("running");

    const failed = await runImport(api, id, smallPageWorker);
    expect(failed).toMatchObject({ locked: false, import: { status: "failed", mode: "move", total: 60 } });
    expect(failed.import.errors).toEqual([{ line: 56, dataId: "SKU-00055", field: "weight", message: expect.any(String) }]);
    expect(failed.import.message).toMatch(/line 56/);
    expect(await countRecords(api, id)).toBe(0);
    expect((await api.get(`/data?q=item`)).body.data).toEqual([]);
    expect(await exportExists(organizationId, uploadId)).toBe(true);
    // Unlocked: the (empty) type can be deleted, which frees its name for a corrected import.
    expect((await api.delete(`/data-type/${id}`)).status).toBe(200);
  });

  it("fails when the export holds more records than its header announces", { timeout: 600_000 }, async () => {
    const { api } = newTenant();
    const { dataType } = await startImport(api, exportText("Miscounted", 30, { announced: 20 }), "copy");
    const failed = await runImport(api, dataType._id);
    expect(failed).toMatchObject({
      locked: false,
      import: { status: "failed", errors: [{ message: expect.stringMatching(/header announces 20/) }] },
    });
    expect(await countRecords(api, dataType._id)).toBe(0);
  });

  it("refuses what cannot start an import: no upload, another organization's upload, a bad header, a taken name", async () => {
    const { api } = newTenant();
    const missing = await api.post("/data-type/import", { mode: "copy", source: { uploadId: "0123456789abcdef01234567" } });
    expect(refusal(missing)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(missing.body.errors.map((error: { field: string }) => error.field)).toEqual(["source.uploadId"]);

    const other = newTenant();
    const foreign = await upload(other.api, exportText("Foreign", 1));
    expect(refusal(await api.post("/data-type/import", { mode: "copy", source: { uploadId: foreign } }))).toEqual({
      status: 400,
      failedCode: "sys-400",
    });

    const badMode = await api.post("/data-type/import", { mode: "link", source: { uploadId: foreign }, extra: 1 });
    expect(badMode.body.errors.map((error: { field: string }) => error.field).sort()).toEqual(["extra", "mode"]);

    const header = {
      format: "field-operations-export",
      formatVersion: 2,
      dataType: {
        name: "Both",
        fields: [
          { title: "Name", type: "title" },
          { id: "code", title: "Code", type: "primaryKey", required: true },
        ],
      },
      recordCount: 0,
    };
    const both = await api.post("/data-type/import", { mode: "copy", source: { uploadId: await upload(api, JSON.stringify(header)) } });
    expect(refusal(both)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(both.body.errors.map((error: { field: string }) => error.field)).toContain("export.dataType.fields.0.type");

    const notJson = await api.post("/data-type/import", { mode: "copy", source: { uploadId: await upload(api, "not json\n{}\n") } });
    expect(notJson.body.errors).toEqual([{ field: "export", message: expect.stringMatching(/line 1/) }]);

    const hubLimited = newTenant({ hubIds: ["hub-1"] });
    const limited = await hubLimited.api.post("/data-type/import", {
      mode: "copy",
      source: { uploadId: await upload(hubLimited.api, exportText("Limited", 1)) },
    });
    expect(limited.status).toBe(403);
    expect(limited.body.failedCode).toBe("dt-403");
    expect((await hubLimited.api.get("/data-types")).body.data_types).toEqual([]);

    expect((await api.post("/data-type", { name: "Taken", fields: [{ title: "Name", type: "title" }] })).status).toBe(201);
    const taken = await api.post("/data-type/import", { mode: "copy", source: { uploadId: await upload(api, exportText("taken", 0)) } });
    expect(taken.status).toBe(409);
    expect(taken.body.failedCode).toBe("dt-001");
    expect((await api.get("/data-types")).body.data_types.map((type: { name: string }) => type.name)).toEqual(["Taken"]);
  });

  it("refuses an upload stored with another content type (400 on export), creates nothing, and imports the same bytes sent as the form says", async () => {
    const { api, organizationId } = newTenant();
    const text = exportText("Typed", 2);
    // The form itself refuses another content type (its policy names the export's: 403 from S3) ...
    const target = await api.post("/data-type/import/upload", undefined);
    const posted = await postExport(target.body.data, text, { "Content-Type": "text/plain" });
    expect(posted.status).toBe(403);
    expect(await s3ErrorCode(posted)).toBe("AccessDenied");
    // ... and an object that reached the key with another type anyway is refused by the import.
    for (const contentType of ["text/plain", "application/octet-stream"]) {
      const refused = await api.post("/data-type/import", {
        mode: "copy",
        source: { uploadId: await storeDirectly(api, organizationId, text, contentType) },
      });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.errors).toEqual([
        { field: "export", message: expect.stringContaining(`uploaded as ${contentType}; it must be ${EXPORT_CONTENT_TYPE}`) },
      ]);
    }
    expect((await api.get("/data-types")).body.data_types).toEqual([]);
    expect((await api.post("/data-type/import", { mode: "copy", source: { uploadId: await upload(api, text) } })).status).toBe(202);
  });

  it("imports an export with no records at once (header only, no trailing newline)", async () => {
    const { api } = newTenant();
    const text = exportText("Empty legacy", 0).trimEnd();
    const { dataType } = await startImport(api, text, "copy");
    const done = await runImport(api, dataType._id);
    expect(done).toMatchObject({ locked: false, import: { status: "done", processed: 0, total: 0 } });
  });
});

describe("POST /data-type/import: edge exports", () => {
  it("refuses an empty export at once with a 400 naming it", async () => {
    const { api, organizationId } = newTenant();
    // The form refuses an empty file (content-length-range starts at 1: 400 EntityTooSmall from S3).
    const target = await api.post("/data-type/import/upload", undefined);
    const posted = await postExport(target.body.data, "");
    expect(posted.status).toBe(400);
    expect(await s3ErrorCode(posted)).toBe("EntityTooSmall");
    const response = await api.post("/data-type/import", {
      mode: "copy",
      source: { uploadId: await storeDirectly(api, organizationId, "") },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-400" });
    expect(response.body.errors).toEqual([{ field: "export", message: expect.stringMatching(/empty/) }]);
    // At once: refused by the request itself, not by a queued import (no data type was created).
    expect((await api.get("/data-types")).body.data_types).toEqual([]);
  });

  it("imports a legacy type with 6 searchable fields (earlier types stay savable), and a save keeps them", {
    timeout: 120_000,
  }, async () => {
    const { api } = newTenant();
    const fields = [
      { id: "dataId", title: "Code", type: "primaryKey", required: true, unique: true, searchable: true, primaryKey: true },
      ...["a", "b", "c", "d", "e"].map((id) => ({ id, title: id.toUpperCase(), type: "string", required: false, searchable: true })),
    ];
    const header = {
      format: "field-operations-export",
      formatVersion: 2,
      dataType: { name: "Six searchable", fields, commonData: true },
      recordCount: 1,
    };
    const text = `${JSON.stringify(header)}\n${JSON.stringify({ dataId: "K-1", values: { a: "alpha", e: "epsilon" } })}\n`;
    const { dataType } = await startImport(api, text, "copy");
    const done = await runImport(api, dataType._id);
    expect(done).toMatchObject({ locked: false, import: { status: "done", processed: 1 } });
    expect((await api.get(`/data?dataTypeId=${dataType._id}&q=epsilon`)).body.data).toHaveLength(1);
    const { _id, import: _import, ...saved } = done;
    expect((await api.put(`/data-type/${_id}`, saved)).status).toBe(200);
  });
});

describe("POST /data-type/import: the plan's import limits", () => {
  const month = () => new Date().toISOString().slice(0, 7);
  /** The tenant record the operator's CLI writes (overwrites one written by auto-enrollment). */
  const seedTenant = (organizationId: string, plan: string) =>
    documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.tenant(organizationId),
          GSI1PK: keys.tenantsIndexPartition,
          GSI1SK: organizationId,
          entity: "tenant",
          organizationId,
          plan,
          status: "active",
          apiKeyValue: `key-${organizationId}`,
          createdTime: "2026-01-01 00:00:00",
          updatedTime: "2026-01-01 00:00:00",
        },
      }),
    );
  const seedImportedRecords = (organizationId: string, records: number) =>
    documentClient().send(
      new PutCommand({ TableName: tableName(), Item: { ...keys.importRecordsTotal(organizationId, month()), records } }),
    );
  const importStart = async (api: ApiClient, text: string) =>
    api.post("/data-type/import", { mode: "copy", source: { uploadId: await upload(api, text) } });
  const dataTypeNames = async (api: ApiClient) => (await api.get("/data-types")).body.data_types.map((type: { name: string }) => type.name);

  it("free plan: one import at a time (429 import-429, also for concurrent calls), the slot frees when it ends", {
    timeout: 120_000,
  }, async () => {
    const { api, organizationId } = newTenant();
    await seedTenant(organizationId, "free");
    const uploads = await Promise.all([1, 2, 3, 4, 5].map((i) => upload(api, exportText(`Concurrent ${i}`, 3))));
    // The five starts' slot transactions are gathered at the proxy so they race whatever the machine's
    // load (a busy machine could serve them one after another: each later call would then read the
    // slot taken and never meet the model). The first takes the slot; the others conflict, retry, then
    // find it taken.
    const semantics = resetStrictDynamoDb();
    const gathered = semantics.gatherTransactions(5, 60_000);
    const answers = await Promise.all(uploads.map((uploadId) => api.post("/data-type/import", { mode: "copy", source: { uploadId } })));
    expect(await gathered).toBe(5);
    expect(semantics.counters().transactionConflicts).toBeGreaterThanOrEqual(4);
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 429, 429, 429, 429]);
    for (const refused of answers.filter((answer) => answer.status === 429)) {
      expect(refused.body).toMatchObject({
        status: false,
        failedCode: "import-429",
        message: expect.stringContaining("1 imports queued or running"),
      });
    }
    // Those 10 calls took the free plan's whole burst (10, refilled at 5 a second): let it refill.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    // The refused calls created nothing.
    expect(await dataTypeNames(api)).toHaveLength(1);
    const running = answers.find((answer) => answer.status === 202)?.body.data_type;
    expect((await runImport(api, running._id)).import.status).toBe("done");
    expect((await importStart(api, exportText("After", 3))).status).toBe(202);
    expect(await importRecordsUsed(organizationId, month())).toBe(6);
  });

  it("free plan: records per month (429 import-quota-429 naming the quota and its reset, nothing created); a failed import is charged only what it wrote", async () => {
    const { api, organizationId } = newTenant();
    await seedTenant(organizationId, "free");
    await seedImportedRecords(organizationId, 9_990);
    const over = await importStart(api, exportText("Too many", 11));
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ status: false, failedCode: "import-quota-429" });
    expect(over.body.message).toContain("plan free allows 10000 imported records per month, 9990 are used");
    expect(over.body.message).toContain(
      `resets at ${new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1)).toISOString()}`,
    );
    expect(await dataTypeNames(api)).toEqual([]);
    expect(await importRecordsUsed(organizationId, month())).toBe(9_990);

    // Exactly what is left fits; it fails on its second page (the first page's 50 records written, then removed): charged 50, the rest given back.
    await seedImportedRecords(organizationId, 9_940);
    const fits = await importStart(api, exportText("Fits", 60, { badLine: 56 }));
    expect(fits.status, JSON.stringify(fits.body)).toBe(202);
    expect(await importRecordsUsed(organizationId, month())).toBe(10_000);
    expect((await runImport(api, fits.body.data_type._id, smallPageWorker)).import.status).toBe("failed");
    expect(await importRecordsUsed(organizationId, month())).toBe(9_990);
  });

  it("free plan: an export larger than maxImportBytes (10 MiB) is a 400 on export and creates nothing", { timeout: 120_000 }, async () => {
    const { api, organizationId } = newTenant();
    await seedTenant(organizationId, "free");
    // Blank lines are skipped by the import: only the size decides.
    const text = `${exportText("Big", 1)}${" ".repeat(10 * 1024 * 1024)}\n`;
    // The upload form is signed for the plan's size: S3 refuses this one (400 EntityTooLarge) ...
    const target = await api.post("/data-type/import/upload", undefined);
    expect(target.body.data.maxBytes).toBe(10 * 1024 * 1024);
    const policy = JSON.parse(Buffer.from(target.body.data.fields.Policy, "base64").toString("utf8"));
    expect(policy.conditions).toContainEqual(["content-length-range", 1, 10 * 1024 * 1024]);
    const posted = await postExport(target.body.data, text);
    expect(posted.status).toBe(400);
    expect(await s3ErrorCode(posted)).toBe("EntityTooLarge");
    // ... and the import refuses such an object that reached the key past the form.
    const response = await api.post("/data-type/import", {
      mode: "copy",
      source: { uploadId: await storeDirectly(api, organizationId, text) },
    });
    expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(response.body.errors).toEqual([
      { field: "export", message: expect.stringMatching(/plan free lets an import read at most 10485760 bytes/) },
    ]);
    expect(await dataTypeNames(api)).toEqual([]);
    expect(await importRecordsUsed(organizationId, month())).toBe(0);
  });

  it("a refused create (taken name) gives its charge and slot back", async () => {
    const { api, organizationId } = newTenant();
    await seedTenant(organizationId, "free");
    expect((await api.post("/data-type", { name: "Taken", fields: [{ title: "Name", type: "title" }] })).status).toBe(201);
    expect(refusal(await importStart(api, exportText("taken", 4)))).toEqual({ status: 409, failedCode: "dt-001" });
    expect(await dataTypeNames(api)).toEqual(["Taken"]);
    expect(await importRecordsUsed(organizationId, month())).toBe(0);
    expect((await importStart(api, exportText("Free name", 4))).status).toBe(202);
  });
});
