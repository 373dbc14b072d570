import * as z from "zod/mini";
import { component, idSchema, pageQuery, clientText } from "#shared/domain/schemas";

/**
 * App integration: single sign-on settings of an organization (an authentication URL and the
 * identity provider's X.509 certificate). The request is `multipart/form-data`; text parts are
 * validated here, the certificate's content by certificate.ts.
 */
export const integrationTypes = ["azure"] as const;
export type IntegrationType = (typeof integrationTypes)[number];

export const MAX_AUTH_URL_LENGTH = 2048;

/** A file part of the form (shared/http/multipart.ts produces these; structural, so the domain needs no HTTP import). */
export interface FormFile {
  filename: string;
  contentType: string;
  content: Buffer;
}

function isFormFile(value: unknown): value is FormFile {
  const file = value as FormFile | null;
  return (
    typeof file === "object" &&
    file !== null &&
    typeof file.filename === "string" &&
    typeof file.contentType === "string" &&
    Buffer.isBuffer(file.content)
  );
}

const missingOr = (otherwise: string) => (issue: { input: unknown }) => (issue.input === undefined ? "is required" : otherwise);

// biome-ignore lint/suspicious/noControlCharactersInRegex: a URL with a space or control character is refused
const URL_SPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

/** Absolute `https://` URL with a host and without user info; the raw text must already say `https://`. */
export function isAbsoluteHttpsUrl(text: string): boolean {
  if (!/^https:\/\//i.test(text) || URL_SPACE_OR_CONTROL.test(text) || !URL.canParse(text)) return false;
  const url = new URL(text);
  return url.protocol === "https:" && url.hostname !== "" && url.username === "" && url.password === "";
}

const integrationTypeField = z
  .enum(integrationTypes, { error: missingOr(`must be one of: ${integrationTypes.join(", ")}`) })
  .check(z.describe("Identity provider. `azure` (Microsoft Entra ID / Azure AD) is the only one today; more may be added."));

const azureAuthUrlField = z
  .string({ error: missingOr("must be a text field") })
  .check(
    clientText,
    z.trim(),
    z.maxLength(MAX_AUTH_URL_LENGTH, `must be at most ${MAX_AUTH_URL_LENGTH} characters`),
    z.refine(isAbsoluteHttpsUrl, "must be an absolute https:// URL (with a host, without user name or password)"),
    z.describe("Single sign-on authentication URL: absolute `https://` URL, at most 2048 characters, no credentials in it."),
  );

const azureCertField = z.custom<FormFile>(isFormFile, { error: missingOr("must be a file upload (a part with a filename)") }).check(
  z.meta({
    type: "string",
    format: "binary",
    description:
      "The identity provider's X.509 certificate, PEM or DER, at most 65536 bytes (larger: 413). Private keys or other PEM blocks are refused. Stored as sent, with its file name.",
  }),
);

export const appIntegrationCreateFormSchema = z.strictObject({
  integrationType: integrationTypeField,
  azureAuthUrl: azureAuthUrlField,
  azureCert: azureCertField,
});
export type AppIntegrationCreateInput = z.infer<typeof appIntegrationCreateFormSchema>;

export const appIntegrationUpdateFormSchema = z
  .partial(appIntegrationCreateFormSchema)
  .check(z.refine((form) => Object.keys(form).length > 0, { message: "send at least one of integrationType, azureAuthUrl, azureCert" }));
export type AppIntegrationUpdateInput = z.infer<typeof appIntegrationUpdateFormSchema>;

export const appIntegrationParamsSchema = z.strictObject({
  appIntegrationId: z
    .string()
    .check(
      clientText,
      z.minLength(1),
      z.maxLength(64),
      z.describe("`_id` of the integration; an unknown id (or one of another organization) is 404."),
    ),
});

export const appIntegrationListQuerySchema = pageQuery({});

/** Where the certificate lives in the private bucket (never returned to clients). */
export const storedCertificateSchema = z.object({
  objectKey: z.string().check(clientText),
  versionId: z.optional(z.string().check(clientText)),
  fileName: z.string().check(clientText),
  contentType: z.string().check(clientText),
  format: z.enum(["pem", "der"]),
  sizeBytes: z.number().check(z.int()),
  sha256: z.string().check(clientText),
});
export type StoredCertificate = z.infer<typeof storedCertificateSchema>;

/** The stored item. */
export const appIntegrationRecordSchema = z.object({
  _id: idSchema,
  integrationType: z.enum(integrationTypes),
  azureAuthUrl: z.string().check(clientText),
  certificate: storedCertificateSchema,
  organizationId: z.string().check(clientText),
  createdTime: z.string().check(clientText),
  updatedTime: z.string().check(clientText),
});
export type AppIntegrationRecord = z.infer<typeof appIntegrationRecordSchema>;

const isoMicros = "ISO 8601 UTC with microseconds, e.g. 2026-11-22T09:25:03.123456Z";

/** What clients see. */
export const appIntegrationSchema = z.object({
  _id: idSchema,
  integrationType: z.enum(integrationTypes),
  azureAuthUrl: z.string().check(clientText),
  azureCert: z
    .string()
    .check(
      clientText,
      z.describe(
        "Short-lived presigned GET URL of the stored certificate file (valid for PRESIGN_TTL_SECONDS, default 15 minutes); the bucket itself is private. Read the integration again for a fresh URL.",
      ),
    ),
  organizationId: z.string().check(clientText),
  createdTime: z.string().check(clientText, z.describe(isoMicros)),
  updatedTime: z.string().check(clientText, z.describe(isoMicros)),
});
export type AppIntegration = z.infer<typeof appIntegrationSchema>;

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("AppIntegration", appIntegrationSchema);
component("AppIntegrationForm", appIntegrationCreateFormSchema);
component("AppIntegrationUpdateForm", appIntegrationUpdateFormSchema);
