import { randomBytes } from "node:crypto";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { bucketName, s3Client } from "#shared/blob/s3";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { selfSignedCertificate } from "#test/fixtures/app-integrations/self-signed-certificate";
import { apiClient, baseUrl, newTenant, tokenFor, type ApiClient } from "#test/support/local-api";
import { refusal, s3Refusal } from "#test/support/refusals";
import { inlineRefs } from "#test/support/openapi-refs";

/**
 * App integration through the local gateway with real multipart bodies. Certificates are made by
 * the test (test/fixtures/app-integrations/self-signed-certificate.ts); S3 and DynamoDB are read
 * directly to prove that failed requests leave nothing behind.
 */
interface FilePart {
  filename: string;
  content: Buffer | string;
  contentType?: string;
}
type Part = [name: string, value: string | FilePart];

/** A multipart body built byte by byte, so tests control every edge (boundary, empty files, odd names). */
function multipart(parts: Part[], boundary = `----test-${randomBytes(8).toString("hex")}`) {
  const chunks: Buffer[] = [];
  for (const [name, value] of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if (typeof value === "string") {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    } else {
      chunks.push(
        Buffer.from(
          `Content-Disposition: form-data; name="${name}"; filename="${value.filename}"\r\nContent-Type: ${value.contentType ?? "application/octet-stream"}\r\n\r\n`,
        ),
        Buffer.isBuffer(value.content) ? value.content : Buffer.from(value.content),
        Buffer.from("\r\n"),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

function postForm(api: ApiClient, path: string, parts: Part[], boundary?: string) {
  const { body, contentType } = multipart(parts, boundary);
  return api.request("POST", path, { rawBody: body, headers: { "content-type": contentType } });
}

const authUrl = "https://login.microsoftonline.com/0f1e2d3c-tenant/saml2";

function validParts(certificate = selfSignedCertificate().pem, filename = "sso.pem"): Part[] {
  return [
    ["integrationType", "azure"],
    ["azureAuthUrl", authUrl],
    ["azureCert", { filename, content: certificate, contentType: "application/x-pem-file" }],
  ];
}

async function createIntegration(api: ApiClient, parts: Part[] = validParts()) {
  const response = await postForm(api, "/app-integration", parts);
  expect(response.status).toBe(201);
  return response.body.data;
}

async function storedObjects(organizationId: string): Promise<string[]> {
  const output = await s3Client().send(
    new ListObjectsV2Command({ Bucket: bucketName(), Prefix: `certificates/${encodeURIComponent(organizationId)}/` }),
  );
  return (output.Contents ?? []).map((object) => object.Key as string);
}

async function storedItems(organizationId: string) {
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.organizationPartition(organizationId), ":prefix": keys.appIntegrationPrefix },
    }),
  );
  return output.Items ?? [];
}

async function expectNothingStored(organizationId: string) {
  expect(await storedObjects(organizationId)).toEqual([]);
  expect(await storedItems(organizationId)).toEqual([]);
}

async function download(url: string) {
  const response = await fetch(url);
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()), headers: response.headers };
}

const isoMicros = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe("App integration API", () => {
  describe("POST /app-integration", () => {
    it("stores a PEM certificate privately and answers a presigned URL that serves the same bytes", async () => {
      const { api, organizationId } = newTenant();
      const certificate = selfSignedCertificate();
      const response = await postForm(api, "/app-integration", validParts(certificate.pem, "contoso sso.pem"));

      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ status: true, code: 201, message: "Integration has been added successfully." });
      const data = response.body.data;
      expect(Object.keys(data).sort()).toEqual([
        "_id",
        "azureAuthUrl",
        "azureCert",
        "createdTime",
        "integrationType",
        "organizationId",
        "updatedTime",
      ]);
      expect(data).toMatchObject({ integrationType: "azure", azureAuthUrl: authUrl, organizationId });
      expect(data._id).toMatch(/^[0-9a-f]{24}$/);
      expect(data.createdTime).toMatch(isoMicros);
      expect(data.updatedTime).toBe(data.createdTime);

      const url = new URL(data.azureCert);
      expect(url.searchParams.get("X-Amz-Expires")).toBe("900");
      // A SigV4 query-signed URL (s3rver does not verify V4 signatures, so the bucket's privacy is proven by the CDK tests, not here).
      expect(url.searchParams.get("X-Amz-Algorithm")).toBe("AWS4-HMAC-SHA256");
      expect(url.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
      const file = await download(data.azureCert);
      expect(file.status).toBe(200);
      expect(file.bytes.equals(Buffer.from(certificate.pem))).toBe(true);
      expect(file.headers.get("content-disposition")).toBe(`attachment; filename="contoso sso.pem"; filename*=UTF-8''contoso%20sso.pem`);

      // One object, under the organization's prefix, named after the integration and the original file.
      const objectKeys = await storedObjects(organizationId);
      expect(objectKeys).toHaveLength(1);
      expect(objectKeys[0]).toMatch(
        new RegExp(`^certificates/${encodeURIComponent(organizationId)}/${data._id}/[0-9a-f]{24}/contoso%20sso\\.pem$`),
      );

      expect(await storedItems(organizationId)).toHaveLength(1);
    });

    it("stores a DER certificate byte for byte", async () => {
      const { api } = newTenant();
      const certificate = selfSignedCertificate();
      const data = await createIntegration(
        api,
        validParts()
          .slice(0, 2)
          .concat([["azureCert", { filename: "sso.cer", content: certificate.der }]]),
      );
      const file = await download(data.azureCert);
      expect(file.bytes.equals(certificate.der)).toBe(true);
    });

    it("accepts a body built by the platform's FormData (fetch)", async () => {
      const { organizationId } = newTenant();
      const certificate = selfSignedCertificate();
      const form = new FormData();
      form.set("integrationType", "azure");
      form.set("azureAuthUrl", authUrl);
      form.set("azureCert", new Blob([certificate.der]), "idp.cer");
      const response = await fetch(`${baseUrl()}/app-integration`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokenFor({ organizationId })}` },
        body: form,
      });
      expect(response.status).toBe(201);
      const body = (await response.json()) as { data: { azureCert: string } };
      expect((await download(body.data.azureCert)).bytes.equals(certificate.der)).toBe(true);
    });

    it.each([
      ["a boundary with underscores (axios, Apache HttpClient)", "axios-Zq_9-_x8Ab"],
      ["a boundary with RFC 2046 punctuation", "a'(b)+c,d.e/f:g=h?i"],
    ])("accepts %s", async (_case, boundary) => {
      const { api } = newTenant();
      const response = await postForm(api, "/app-integration", validParts(), boundary);
      expect(response.status).toBe(201);
    });

    it("accepts a quoted boundary (.NET)", async () => {
      const { api } = newTenant();
      const { body } = multipart(validParts(), "7d9f3c1e-5b2a-4c8d-9e0f-1a2b3c4d5e6f");
      const response = await api.request("POST", "/app-integration", {
        rawBody: body,
        headers: { "content-type": 'multipart/form-data; boundary="7d9f3c1e-5b2a-4c8d-9e0f-1a2b3c4d5e6f"' },
      });
      expect(response.status).toBe(201);
    });

    const privateKeyPem = () => {
      const certificate = selfSignedCertificate();
      return certificate.pem + certificate.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    };
    const [typeField, urlField, certField] = validParts();
    const cases: Array<[string, () => Part[], string]> = [
      [
        "a file that is not a certificate",
        () => [typeField!, urlField!, ["azureCert", { filename: "notes.txt", content: "hello, not a certificate" }]],
        "azureCert",
      ],
      ["an empty file", () => [typeField!, urlField!, ["azureCert", { filename: "empty.pem", content: Buffer.alloc(0) }]], "azureCert"],
      [
        "a PEM certificate bundled with its private key",
        () => [typeField!, urlField!, ["azureCert", { filename: "bundle.pem", content: privateKeyPem() }]],
        "azureCert",
      ],
      [
        "a DER certificate followed by other bytes",
        () => [
          typeField!,
          urlField!,
          ["azureCert", { filename: "sso.cer", content: Buffer.concat([selfSignedCertificate().der, Buffer.from("tail")]) }],
        ],
        "azureCert",
      ],
      ["the certificate sent as a text field", () => [typeField!, urlField!, ["azureCert", selfSignedCertificate().pem]], "azureCert"],
      [
        "the URL sent as a file",
        () => [typeField!, ["azureAuthUrl", { filename: "url.txt", content: authUrl }], certField!],
        "azureAuthUrl",
      ],
      ["an extra text field named files", () => [...validParts(), ["files", "x"]], "files"],
      ["an extra text field named __proto__", () => [...validParts(), ["__proto__", "x"]], "__proto__"],
      ["missing integrationType", () => [urlField!, certField!], "integrationType"],
      ["missing azureAuthUrl", () => [typeField!, certField!], "azureAuthUrl"],
      ["missing azureCert", () => [typeField!, urlField!], "azureCert"],
      ["an unknown integrationType", () => [["integrationType", "okta"], urlField!, certField!], "integrationType"],
      ["an http:// URL", () => [typeField!, ["azureAuthUrl", "http://login.example.com/sso"], certField!], "azureAuthUrl"],
      ["a relative URL", () => [typeField!, ["azureAuthUrl", "/saml2"], certField!], "azureAuthUrl"],
      ["text that is not a URL", () => [typeField!, ["azureAuthUrl", "login page"], certField!], "azureAuthUrl"],
      [
        "a URL with credentials",
        () => [typeField!, ["azureAuthUrl", "https://user:secret@login.example.com/"], certField!],
        "azureAuthUrl",
      ],
      [
        "a URL over 2048 characters",
        () => [typeField!, ["azureAuthUrl", `https://login.example.com/${"a".repeat(2030)}`], certField!],
        "azureAuthUrl",
      ],
      ["a field sent twice", () => [...validParts(), ["azureAuthUrl", authUrl]], "azureAuthUrl"],
    ];

    it.each(cases)("rejects %s with 400 naming the field and stores nothing", async (_case, parts, field) => {
      const { api, organizationId } = newTenant();
      const response = await postForm(api, "/app-integration", parts());
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body).toMatchObject({ status: false, message: "Bad request - invalid parameters provided." });
      expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
      await expectNothingStored(organizationId);
    });

    it.each([
      ["no closing boundary", (body: Buffer) => body.subarray(0, body.length - 10)],
      ["a body without the boundary", () => Buffer.from("integrationType=azure&azureAuthUrl=x")],
    ])("rejects a malformed body (%s) with 400 and stores nothing", async (_case, mangle) => {
      const { api, organizationId } = newTenant();
      const { body, contentType } = multipart(validParts());
      const response = await api.request("POST", "/app-integration", { rawBody: mangle(body), headers: { "content-type": contentType } });
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors[0].field).toBe("body");
      await expectNothingStored(organizationId);
    });

    it("rejects multipart/form-data without a boundary parameter with 400", async () => {
      const { api, organizationId } = newTenant();
      const { body } = multipart(validParts());
      const response = await api.request("POST", "/app-integration", { rawBody: body, headers: { "content-type": "multipart/form-data" } });
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      await expectNothingStored(organizationId);
    });

    it.each([
      ["application/json", JSON.stringify({ integrationType: "azure", azureAuthUrl: authUrl })],
      ["application/x-www-form-urlencoded", `integrationType=azure&azureAuthUrl=${encodeURIComponent(authUrl)}`],
    ])("answers 415 for %s and stores nothing", async (contentType, rawBody) => {
      const { api, organizationId } = newTenant();
      const response = await api.request("POST", "/app-integration", { rawBody, headers: { "content-type": contentType } });
      expect(refusal(response)).toEqual({ status: 415, failedCode: "sys-415" });
      expect(response.body.status).toBe(false);
      await expectNothingStored(organizationId);
    });

    it("answers 413 for a certificate file over 64 KiB and stores nothing", async () => {
      const { api, organizationId } = newTenant();
      const oversized = Buffer.concat([Buffer.from(selfSignedCertificate().pem), Buffer.alloc(64 * 1024, "#")]);
      const response = await postForm(api, "/app-integration", [
        typeField!,
        urlField!,
        ["azureCert", { filename: "big.pem", content: oversized }],
      ]);
      expect(refusal(response)).toEqual({ status: 413, failedCode: "sys-413" });
      expect(response.body).toMatchObject({ status: false, message: expect.stringContaining("azureCert") });
      await expectNothingStored(organizationId);
    });

    it("answers 413 for a body over the route's limit and stores nothing", async () => {
      const { api, organizationId } = newTenant();
      const response = await postForm(api, "/app-integration", [
        typeField!,
        urlField!,
        ["azureCert", { filename: "huge.pem", content: Buffer.alloc(512 * 1024, "A") }],
      ]);
      expect(refusal(response)).toEqual({ status: 413, failedCode: "sys-413" });
      await expectNothingStored(organizationId);
    });
  });

  describe("POST /app-integration/{appIntegrationId}/", () => {
    it("changes the URL only and keeps the certificate file", async () => {
      const { api, organizationId } = newTenant();
      const certificate = selfSignedCertificate();
      const created = await createIntegration(api, validParts(certificate.pem));
      const newUrl = "https://login.microsoftonline.com/other-tenant/saml2";
      const response = await postForm(api, `/app-integration/${created._id}/`, [["azureAuthUrl", newUrl]]);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: true, code: 200, message: "Integration has been updated successfully." });
      expect(response.body.data).toMatchObject({
        _id: created._id,
        azureAuthUrl: newUrl,
        integrationType: "azure",
        createdTime: created.createdTime,
      });
      expect(response.body.data.updatedTime).toMatch(isoMicros);
      expect(response.body.data.updatedTime >= created.updatedTime).toBe(true);
      expect((await download(response.body.data.azureCert)).bytes.equals(Buffer.from(certificate.pem))).toBe(true);
      expect(await storedObjects(organizationId)).toHaveLength(1);
      expect((await api.get(`/app-integration/${created._id}`)).body.data.azureAuthUrl).toBe(newUrl);
    });

    it("replaces the certificate file: the new bytes are served and the old object is deleted", async () => {
      const { api, organizationId } = newTenant();
      const created = await createIntegration(api);
      const [oldKey] = await storedObjects(organizationId);
      const replacement = selfSignedCertificate("Rotated");
      const response = await postForm(api, `/app-integration/${created._id}`, [
        ["azureCert", { filename: "rotated.cer", content: replacement.der }],
      ]);

      expect(response.status).toBe(200);
      expect((await download(response.body.data.azureCert)).bytes.equals(replacement.der)).toBe(true);
      const keysAfter = await storedObjects(organizationId);
      expect(keysAfter).toHaveLength(1);
      expect(keysAfter[0]).not.toBe(oldKey);
      expect(keysAfter[0]?.endsWith("/rotated.cer")).toBe(true);
    });

    it("concurrent certificate replacements: the losers answer 409 and their uploaded files are deleted again", async () => {
      const { api, organizationId } = newTenant();
      const created = await createIntegration(api);
      const integrationPrefix = `certificates/${encodeURIComponent(organizationId)}/${created._id}/`;
      const replacements = Array.from({ length: 6 }, (_, i) => ({
        filename: `rotated-${i}.cer`,
        certificate: selfSignedCertificate(`Rotated ${i}`),
      }));

      // All requests read the same version before any of them writes, so the item's version check
      // refuses all but (at least) one of them after their files are already in the bucket.
      const responses = await Promise.all(
        replacements.map(({ filename, certificate }) =>
          postForm(api, `/app-integration/${created._id}`, [["azureCert", { filename, content: certificate.der }]]),
        ),
      );
      const statuses = responses.map((response) => response.status);
      expect(
        statuses.every((status) => status === 200 || status === 409),
        `statuses: ${statuses.join(", ")}`,
      ).toBe(true);
      expect(statuses.filter((status) => status === 409).length, `statuses: ${statuses.join(", ")}`).toBeGreaterThanOrEqual(1);
      expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
      for (const response of responses.filter((r) => r.status === 409)) expect(response.body.status).toBe(false);

      // Exactly one file is left under the integration: the one the stored item points to (the
      // losers' uploads were rolled back, the winners' predecessors deleted once replaced).
      const [item, ...otherItems] = await storedItems(organizationId);
      expect(otherItems).toEqual([]);
      const storedKey = item?.certificate.objectKey as string;
      expect(storedKey.startsWith(integrationPrefix)).toBe(true);
      expect(await storedObjects(organizationId)).toEqual([storedKey]);

      // And it is one of the replacements, served byte for byte.
      const winner = replacements.find(({ filename }) => storedKey.endsWith(`/${filename}`));
      expect(winner).toBeDefined();
      const current = (await api.get(`/app-integration/${created._id}`)).body.data;
      expect((await download(current.azureCert)).bytes.equals(winner!.certificate.der)).toBe(true);
    });

    it.each([
      ["a non-certificate file", [["azureCert", { filename: "x.pem", content: "nope" }]] as Part[], "azureCert"],
      ["an empty file", [["azureCert", { filename: "x.pem", content: Buffer.alloc(0) }]] as Part[], "azureCert"],
      ["a bad URL", [["azureAuthUrl", "ftp://example.com"]] as Part[], "azureAuthUrl"],
      ["an unknown field", [["files", "x"]] as Part[], "files"],
      ["no field at all", [] as Part[], "body"],
    ])("rejects %s with 400 and changes nothing", async (_case, parts, field) => {
      const { api, organizationId } = newTenant();
      const certificate = selfSignedCertificate();
      const created = await createIntegration(api, validParts(certificate.pem));
      const objectsBefore = await storedObjects(organizationId);
      const itemsBefore = await storedItems(organizationId);

      const response = await postForm(api, `/app-integration/${created._id}`, parts);
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
      expect(await storedObjects(organizationId)).toEqual(objectsBefore);
      expect(await storedItems(organizationId)).toEqual(itemsBefore);
    });

    it("answers 404 Data not found for an unknown id, a malformed id and another organization's id, changing nothing", async () => {
      const owner = newTenant();
      const created = await createIntegration(owner.api);
      const itemsBefore = await storedItems(owner.organizationId);
      const other = newTenant();
      for (const id of ["65a1b2c3d4e5f60718293a4b", "not-an-id", created._id]) {
        const response = await postForm(other.api, `/app-integration/${id}`, validParts());
        expect(refusal(response)).toEqual({ status: 404, failedCode: "sys-404" });
        expect(response.body).toMatchObject({ status: false, message: "Data not found" });
      }
      await expectNothingStored(other.organizationId);
      expect(await storedItems(owner.organizationId)).toEqual(itemsBefore);
      expect(await storedObjects(owner.organizationId)).toHaveLength(1);
    });

    it("answers 415 for a JSON body", async () => {
      const { api } = newTenant();
      const created = await createIntegration(api);
      expect(refusal(await api.post(`/app-integration/${created._id}`, { azureAuthUrl: authUrl }))).toEqual({
        status: 415,
        failedCode: "sys-415",
      });
    });
  });

  describe("GET /app-integration/{appIntegrationId}", () => {
    it("reads the integration with a working download URL", async () => {
      const { api } = newTenant();
      const certificate = selfSignedCertificate();
      const created = await createIntegration(api, validParts(certificate.pem));
      const response = await api.get(`/app-integration/${created._id}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: true, code: 200 });
      expect(response.body.data).toMatchObject({ ...created, azureCert: expect.any(String) });
      expect((await download(response.body.data.azureCert)).bytes.equals(Buffer.from(certificate.pem))).toBe(true);
    });

    it("answers 404 for another organization's integration", async () => {
      const owner = newTenant();
      const created = await createIntegration(owner.api);
      const response = await newTenant().api.get(`/app-integration/${created._id}`);
      expect(refusal(response)).toEqual({ status: 404, failedCode: "sys-404" });
      expect(response.body).toMatchObject({ status: false, message: "Data not found" });
    });
  });

  describe("GET /app-integrations", () => {
    it("lists only the caller's integrations, page by page", async () => {
      const { api } = newTenant();
      const first = await createIntegration(api);
      const second = await createIntegration(api);
      await createIntegration(newTenant().api);
      // Ids order by their creation second, and within one second at random (docs/api/README.md).
      const [older, newer] = [first._id, second._id].sort();

      const page1 = await api.get("/app-integrations?limit=1");
      expect(page1.status).toBe(200);
      expect(page1.body).toMatchObject({ status: true, code: 200 });
      expect(page1.body.data.map((item: { _id: string }) => item._id)).toEqual([older]);
      expect(page1.body.nextCursor).toEqual(expect.any(String));
      const page2 = await api.get(`/app-integrations?limit=1&cursor=${encodeURIComponent(page1.body.nextCursor)}`);
      expect(page2.body.data.map((item: { _id: string }) => item._id)).toEqual([newer]);
      // the last page is full and says so: no empty page after it
      expect(page2.body.nextCursor).toBeNull();
      expect((await download(page1.body.data[0].azureCert)).status).toBe(200);
    });

    it("rejects another organization's cursor and a limit over 100 with 400", async () => {
      const owner = newTenant();
      await createIntegration(owner.api);
      await createIntegration(owner.api);
      const cursor = (await owner.api.get("/app-integrations?limit=1")).body.nextCursor;
      expect(refusal(await newTenant().api.get(`/app-integrations?cursor=${encodeURIComponent(cursor)}`))).toEqual({
        status: 400,
        failedCode: "sys-400",
      });
      expect(refusal(await owner.api.get("/app-integrations?limit=101"))).toEqual({ status: 400, failedCode: "sys-400" });
    });
  });

  describe("DELETE /app-integration/{appIntegrationId}/", () => {
    it("deletes the item and its file; a second delete is 404", async () => {
      const { api, organizationId } = newTenant();
      const created = await createIntegration(api);
      const response = await api.delete(`/app-integration/${created._id}/`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: true, code: 200, message: "Integration has been deleted successfully." });
      await expectNothingStored(organizationId);
      expect(await s3Refusal(await fetch(created.azureCert))).toEqual({ status: 404, code: "NoSuchKey" });
      expect(refusal(await api.get(`/app-integration/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await api.delete(`/app-integration/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
    });

    it("answers 404 for another organization's integration and keeps it", async () => {
      const owner = newTenant();
      const created = await createIntegration(owner.api);
      expect(refusal(await newTenant().api.delete(`/app-integration/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(await storedItems(owner.organizationId)).toHaveLength(1);
      expect(await storedObjects(owner.organizationId)).toHaveLength(1);
    });
  });

  describe("authentication", () => {
    it.each([
      ["POST", "/app-integration"],
      ["POST", "/app-integration/65a1b2c3d4e5f60718293a4b"],
      ["GET", "/app-integrations"],
      ["GET", "/app-integration/65a1b2c3d4e5f60718293a4b"],
      ["DELETE", "/app-integration/65a1b2c3d4e5f60718293a4b"],
    ])("%s %s without a token is 401", async (method, path) => {
      const { body, contentType } = multipart(validParts());
      const response = await apiClient(undefined).request(
        method,
        path,
        method === "POST" ? { rawBody: body, headers: { "content-type": contentType } } : {},
      );
      expect(refusal(response)).toEqual({ status: 401, failedCode: "sys-401" });
      expect(response.body.status).toBe(false);
    });
  });

  it("documents the multipart form in the OpenAPI document", async () => {
    const document = (await apiClient(undefined).get("/openapi.json")).body;
    const schema = inlineRefs(document, document.paths["/app-integration"].post.requestBody.content["multipart/form-data"].schema);
    expect(schema.required).toEqual(["integrationType", "azureAuthUrl", "azureCert"]);
    expect(schema.properties.azureCert).toMatchObject({ type: "string", format: "binary" });
    expect(schema.properties.integrationType.enum).toEqual(["azure"]);
  });
});

describe("App integration create with an Idempotency-Key", () => {
  it("stores the answer without the presigned certificate URL (a secret) and answers a replay with a fresh one", async () => {
    const { api, organizationId } = newTenant();
    const { body, contentType } = multipart(validParts());
    const send = () =>
      api.request("POST", "/app-integration", {
        rawBody: body,
        headers: { "content-type": contentType, "idempotency-key": "create-integration-1" },
      });
    const first = await send();
    expect(first.status).toBe(201);
    expect(first.body.data.azureCert).toMatch(/^https?:\/\//);
    // Every idempotency record of the organization: none holds the URL, its signature or the field.
    const { Items = [] } = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: "PK = :pk",
        ExpressionAttributeValues: { ":pk": keys.idempotencyPartition(organizationId) },
        ConsistentRead: true,
      }),
    );
    expect(Items).toHaveLength(1);
    const stored = JSON.stringify(Items[0]);
    expect(stored).not.toContain(first.body.data.azureCert);
    expect(stored).not.toMatch(/X-Amz-Signature|azureCert/i);
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect({ ...replay.body.data, azureCert: undefined }).toEqual({ ...first.body.data, azureCert: undefined });
    expect(replay.body.data.azureCert).toMatch(/^https?:\/\//);
    const download = await fetch(replay.body.data.azureCert);
    expect(download.status).toBe(200);
  });
});
