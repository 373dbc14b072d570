import { createHash, X509Certificate } from "node:crypto";
import { PayloadTooLargeError, ValidationError } from "#shared/domain/errors";
import type { FormFile } from "#shared/domain/app-integrations/schema";

/**
 * Rules for the uploaded `azureCert` file. The bytes are kept exactly as sent (the identity
 * provider's download, PEM or DER); these checks only decide whether to accept them.
 */
export const MAX_CERTIFICATE_BYTES = 64 * 1024;
export const MAX_CERTIFICATE_FILE_NAME_BYTES = 255;
export const DEFAULT_CERTIFICATE_FILE_NAME = "certificate";

export interface CertificateUpload {
  fileName: string;
  content: Buffer;
  format: "pem" | "der";
  /** Chosen from the format, never taken from the client, so the download is served as a certificate. */
  contentType: "application/x-pem-file" | "application/pkix-cert";
  sha256: string;
}

const FIELD = "azureCert";

// biome-ignore lint/suspicious/noControlCharactersInRegex: a file name with a control character is refused
const FILE_NAME_CONTROL = /[\u0000-\u001f\u007f]/;

/** Browsers (old IE) and some clients send a full path; only the last segment is the file name. */
export function certificateFileName(sent: string): string {
  const baseName = sent.split(/[/\\]/).pop()?.trim() ?? "";
  if (baseName === "" || baseName === "." || baseName === "..") return DEFAULT_CERTIFICATE_FILE_NAME;
  if (FILE_NAME_CONTROL.test(baseName)) throw ValidationError.single(FIELD, "file name must not contain control characters");
  if (Buffer.byteLength(baseName, "utf8") > MAX_CERTIFICATE_FILE_NAME_BYTES) {
    throw ValidationError.single(FIELD, `file name must be at most ${MAX_CERTIFICATE_FILE_NAME_BYTES} bytes`);
  }
  return baseName;
}

/** Labels of the PEM blocks in the file (`CERTIFICATE`, `PRIVATE KEY`, …). */
function pemLabels(text: string): string[] {
  return [...text.matchAll(/-----BEGIN ([^-\r\n]{1,64})-----/g)].map((match) => match[1] ?? "");
}

/** Accepts a PEM file of certificates or one DER certificate; anything else is a 400 naming azureCert. */
export function readCertificateUpload(file: FormFile): CertificateUpload {
  const { content } = file;
  if (content.length === 0) throw ValidationError.single(FIELD, "file is empty");
  if (content.length > MAX_CERTIFICATE_BYTES) throw new PayloadTooLargeError(`${FIELD} must be at most ${MAX_CERTIFICATE_BYTES} bytes.`);
  const fileName = certificateFileName(file.filename);

  const labels = pemLabels(content.toString("latin1"));
  const format = labels.length > 0 ? "pem" : "der";
  const foreign = labels.find((label) => label !== "CERTIFICATE");
  if (foreign !== undefined) {
    // Never store (and hand out URLs to) a private key someone bundled with the certificate.
    throw ValidationError.single(FIELD, `must contain only certificates; remove the "${foreign}" block`);
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(content);
  } catch {
    throw ValidationError.single(FIELD, "must be an X.509 certificate (PEM or DER)");
  }
  // OpenSSL's DER reader stops after the certificate; the file must not carry anything else.
  if (format === "der" && !certificate.raw.equals(content)) {
    throw ValidationError.single(FIELD, "must be an X.509 certificate (PEM or DER) with nothing after it");
  }
  return {
    fileName,
    content,
    format,
    contentType: format === "pem" ? "application/x-pem-file" : "application/pkix-cert",
    sha256: createHash("sha256").update(content).digest("hex"),
  };
}
