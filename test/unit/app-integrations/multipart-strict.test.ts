import { describe, expect, it } from "vitest";
import { AppError, ValidationError } from "#shared/domain/errors";
import { parseMultipart } from "#shared/http/multipart";

/** The product's rules where busboy alone would answer differently (skip, truncate, reclassify). */
const CRLF = "\r\n";
const form = (boundary: string, parts: string[]) =>
  Buffer.from(`${parts.map((part) => `--${boundary}${CRLF}${part}${CRLF}`).join("")}--${boundary}--${CRLF}`, "utf8");
const text = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"${CRLF}${CRLF}${value}`;

function fieldsOfError(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.errors.map((issue) => issue.field);
    if (error instanceof AppError) return [`status ${error.statusCode}`];
    throw error;
  }
  throw new Error("expected an error");
}

describe("Function: parseMultipart (strict rules over busboy)", () => {
  it("refuses a nameless part between good ones instead of skipping it", () => {
    // Prepare
    const raw = form("b", [text("a", "1"), `Content-Type: text/plain${CRLF}${CRLF}lost`, text("c", "3")]);
    // Act / Assess
    expect(fieldsOfError(() => parseMultipart(raw, "b"))).toEqual(["body"]);
  });

  it("keeps a text part sent as application/octet-stream without a filename as text", () => {
    const raw = form("b", [`Content-Disposition: form-data; name="a"${CRLF}Content-Type: application/octet-stream${CRLF}${CRLF}plain`]);
    expect(parseMultipart(raw, "b").a).toBe("plain");
  });

  it("does not truncate a text field at busboy's 1 MiB default", () => {
    const value = "x".repeat(1024 * 1024 + 10);
    expect(parseMultipart(form("b", [text("a", value)]), "b").a).toHaveLength(value.length);
  });

  it("keeps a file's declared content type and its bytes", () => {
    const raw = form("b", [
      `Content-Disposition: form-data; name="f"; filename="a.pem"${CRLF}Content-Type: application/x-pem-file${CRLF}${CRLF}-----BEGIN`,
    ]);
    expect(parseMultipart(raw, "b").f).toEqual({
      filename: "a.pem",
      contentType: "application/x-pem-file",
      content: Buffer.from("-----BEGIN"),
    });
  });

  it("reads a boundary with spaces, colons and underscores (handed to busboy quoted)", () => {
    expect({ ...parseMultipart(form("a b:c_d", [text("a", "1")]), "a b:c_d") }).toEqual({ a: "1" });
  });
});
