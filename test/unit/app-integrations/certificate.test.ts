import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { certificateFileName, MAX_CERTIFICATE_BYTES, readCertificateUpload } from "#shared/domain/app-integrations/certificate";
import { AppError, PayloadTooLargeError, ValidationError } from "#shared/domain/errors";
import { selfSignedCertificate } from "#test/fixtures/app-integrations/self-signed-certificate";

const file = (content: Buffer | string, filename = "sso.pem") => ({
  filename,
  contentType: "text/html", // whatever the client claims is ignored
  content: Buffer.isBuffer(content) ? content : Buffer.from(content),
});

function rejection(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return {
      status: error.statusCode,
      failedCode: error.failedCode,
      field: error instanceof ValidationError ? error.errors[0]?.field : undefined,
      message: error.message,
    };
  }
  throw new Error("expected a rejection");
}

describe("Function: readCertificateUpload", () => {
  const certificate = selfSignedCertificate();

  it("accepts a PEM certificate and keeps its bytes", () => {
    const upload = readCertificateUpload(file(certificate.pem));
    expect(upload).toMatchObject({ fileName: "sso.pem", format: "pem", contentType: "application/x-pem-file" });
    expect(upload.content.equals(Buffer.from(certificate.pem))).toBe(true);
    expect(upload.sha256).toBe(createHash("sha256").update(certificate.pem).digest("hex"));
  });

  it("accepts a DER certificate and serves it as application/pkix-cert", () => {
    expect(readCertificateUpload(file(certificate.der, "sso.cer"))).toMatchObject({ format: "der", contentType: "application/pkix-cert" });
  });

  it("accepts a PEM chain and text around the blocks (as openssl and Azure downloads carry)", () => {
    const chain = `Bag Attributes\n    friendlyName: sso\nsubject=CN = test\n${certificate.pem}${selfSignedCertificate("Intermediate").pem}`;
    expect(readCertificateUpload(file(chain)).format).toBe("pem");
  });

  it.each([
    ["an empty file", Buffer.alloc(0), "file is empty"],
    ["plain text", Buffer.from("just some text"), "must be an X.509 certificate (PEM or DER)"],
    ["random bytes", Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01]), "must be an X.509 certificate (PEM or DER)"],
    ["a truncated DER certificate", certificate.der.subarray(0, certificate.der.length - 5), "must be an X.509 certificate (PEM or DER)"],
    [
      "a DER certificate with bytes after it",
      Buffer.concat([certificate.der, Buffer.from([0])]),
      "must be an X.509 certificate (PEM or DER) with nothing after it",
    ],
    [
      "a PEM block with broken base64",
      Buffer.from("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"),
      "must be an X.509 certificate (PEM or DER)",
    ],
    [
      "a certificate bundled with its private key",
      Buffer.from(certificate.pem + certificate.privateKey.export({ type: "pkcs8", format: "pem" }).toString()),
      'must contain only certificates; remove the "PRIVATE KEY" block',
    ],
    [
      "a public key instead of a certificate",
      Buffer.from("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"),
      'must contain only certificates; remove the "PUBLIC KEY" block',
    ],
  ])("rejects %s with 400 naming azureCert", (_case, content, message) => {
    const error = (() => {
      try {
        readCertificateUpload(file(content));
      } catch (caught) {
        return caught;
      }
      throw new Error("expected a rejection");
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).errors).toEqual([{ field: "azureCert", message }]);
  });

  it("accepts exactly 64 KiB and answers 413 naming azureCert above it", () => {
    const padded = (size: number) => Buffer.concat([Buffer.from(certificate.pem), Buffer.alloc(size - certificate.pem.length, "\n")]);
    expect(readCertificateUpload(file(padded(MAX_CERTIFICATE_BYTES))).content.length).toBe(MAX_CERTIFICATE_BYTES);
    const tooLarge = rejection(() => readCertificateUpload(file(padded(MAX_CERTIFICATE_BYTES + 1))));
    expect(tooLarge).toMatchObject({ status: 413, failedCode: "sys-413" });
    expect(tooLarge.message).toContain("azureCert");
    expect(() => readCertificateUpload(file(padded(MAX_CERTIFICATE_BYTES + 1)))).toThrow(PayloadTooLargeError);
  });
});

describe("Function: certificateFileName", () => {
  it.each([
    ["sso.pem", "sso.pem"],
    ["  spaced name.cer ", "spaced name.cer"],
    ["C:\\Users\\ops\\Downloads\\idp.cer", "idp.cer"],
    ["../../etc/passwd", "passwd"],
    ["", "certificate"],
    ["folder/", "certificate"],
    ["..", "certificate"],
    ["Zertifikat-ü€.pem", "Zertifikat-ü€.pem"],
  ])("%j → %j", (sent, kept) => {
    expect(certificateFileName(sent)).toBe(kept);
  });

  it("rejects control characters and names over 255 bytes with 400 naming azureCert", () => {
    expect(rejection(() => certificateFileName("bad\u0007name.pem"))).toMatchObject({ status: 400, field: "azureCert" });
    const name255Bytes = `${"é".repeat(126)}.pe`; // 126 × 2 + 3 bytes
    expect(certificateFileName(name255Bytes)).toBe(name255Bytes);
    expect(rejection(() => certificateFileName(`${name255Bytes}m`))).toMatchObject({ status: 400, field: "azureCert" });
  });
});
