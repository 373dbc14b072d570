import * as z from "zod/mini";
import { MAX_CERTIFICATE_BYTES } from "#shared/domain/app-integrations/certificate";
import {
  appIntegrationCreateFormSchema,
  appIntegrationListQuerySchema,
  appIntegrationParamsSchema,
  appIntegrationSchema,
  appIntegrationUpdateFormSchema,
} from "#shared/domain/app-integrations/schema";
import { errorBodySchema, clientText } from "#shared/domain/schemas";
import { defineRoute } from "#shared/http/route";

const tag = "App integration";

/** App integration bodies carry the HTTP status as `code` (spec). */
const integrationBody = <C extends number>(code: C) =>
  z.object({ status: z.literal(true), code: z.literal(code), message: z.string().check(clientText), data: appIntegrationSchema });

/** The certificate (≤ 64 KiB) plus the text fields and multipart framing. */
const MAX_FORM_BYTES = MAX_CERTIFICATE_BYTES + 16 * 1024;

const formErrors = {
  413: { description: `Body over ${MAX_FORM_BYTES} bytes, or azureCert over ${MAX_CERTIFICATE_BYTES} bytes.`, schema: errorBodySchema },
  415: { description: "Content-Type is not multipart/form-data.", schema: errorBodySchema },
};

const formRules = [
  "Request: `multipart/form-data` (any RFC 7578 boundary, quoted or not). A malformed body, a field sent twice, a text field sent as a file (or the file as text), unknown fields and text that is not UTF-8 are 400 naming the field (or `body`).",
  "azureCert must parse as an X.509 certificate (PEM, one or more CERTIFICATE blocks and nothing else such as a private key; or one DER certificate with nothing after it). An empty file is a 400. The bytes and the file name (last path segment) are stored unchanged in the private bucket, under the organization's prefix.",
  "In responses `azureCert` is a presigned GET URL valid for 15 minutes by default (PRESIGN_TTL_SECONDS); it downloads the file as an attachment.",
  "A request that fails leaves no file and no item behind: the file is written under a new key first, then the item conditionally, and the file is deleted again when the item write fails.",
].join("\n\n");

export const appIntegrationRoutes = {
  create: defineRoute({
    operationId: "createAppIntegration",
    method: "POST",
    path: "/app-integration",
    handler: "functions/http/app-integrations/create.ts",
    summary: "Add single sign-on settings",
    description: `All three fields are required. An organization may hold several integrations (the spec sets no limit); each has its own _id.\n\n${formRules}`,
    tag,
    permission: "add/app-integration",
    bodyType: "multipart/form-data",
    maxBodyBytes: MAX_FORM_BYTES,
    body: appIntegrationCreateFormSchema,
    responses: () => ({ 201: { description: "Created", schema: integrationBody(201) }, ...formErrors }),
    grants: ["tableWrite", "bucketWrite"],
    idempotent: true,
  }),
  update: defineRoute({
    operationId: "updateAppIntegration",
    method: "POST",
    path: "/app-integration/{appIntegrationId}",
    handler: "functions/http/app-integrations/update.ts",
    summary: "Change single sign-on settings",
    description: `The update uses POST (spec). Every field is optional, at least one is required; fields sent replace the stored ones. A new azureCert replaces the stored file: the old object is deleted once the integration points to the new one. A trailing slash on the path is accepted.\n\n${formRules}`,
    tag,
    permission: "edit/app-integration",
    bodyType: "multipart/form-data",
    maxBodyBytes: MAX_FORM_BYTES,
    params: appIntegrationParamsSchema,
    body: appIntegrationUpdateFormSchema,
    responses: () => ({ 200: { description: "The updated integration", schema: integrationBody(200) }, ...formErrors }),
    grants: ["tableWrite", "bucketWrite"],
    versioned: true,
  }),
  list: defineRoute({
    operationId: "listAppIntegrations",
    method: "GET",
    path: "/app-integrations",
    handler: "functions/http/app-integrations/list.ts",
    summary: "List the organization's integrations",
    description: "Oldest first. Each `azureCert` is a fresh presigned URL.",
    tag,
    permission: "view/app-integration",
    query: appIntegrationListQuerySchema,
    responses: () => ({
      200: {
        description: "A page of integrations",
        schema: z.object({
          status: z.literal(true),
          code: z.literal(200),
          message: z.string().check(clientText),
          data: z.array(appIntegrationSchema),
          nextCursor: z.nullable(z.string().check(clientText)),
        }),
      },
    }),
    grants: ["tableRead", "bucketRead"],
  }),
  get: defineRoute({
    operationId: "getAppIntegration",
    method: "GET",
    path: "/app-integration/{appIntegrationId}",
    handler: "functions/http/app-integrations/get.ts",
    summary: "Read an integration",
    description: "`azureCert` is a fresh presigned URL on every read.",
    tag,
    permission: "view/app-integration",
    params: appIntegrationParamsSchema,
    responses: () => ({ 200: { description: "The integration", schema: integrationBody(200) } }),
    grants: ["tableRead", "bucketRead"],
    versioned: true,
  }),
  remove: defineRoute({
    operationId: "deleteAppIntegration",
    method: "DELETE",
    path: "/app-integration/{appIntegrationId}",
    handler: "functions/http/app-integrations/delete.ts",
    summary: "Delete an integration and its certificate file",
    description:
      "The item is deleted first, then its file (that exact object version in a versioned bucket). A trailing slash on the path is accepted.",
    tag,
    permission: "delete/app-integration",
    params: appIntegrationParamsSchema,
    responses: () => ({
      200: {
        description: "Deleted",
        schema: z.object({ status: z.literal(true), code: z.literal(200), message: z.string().check(clientText) }),
      },
    }),
    grants: ["tableWrite", "bucketWrite"],
    versioned: true,
  }),
};
