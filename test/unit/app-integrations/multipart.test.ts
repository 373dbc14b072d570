import type { APIGatewayProxyEvent } from "aws-lambda";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppError, PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from "#shared/domain/errors";
import { headerParameters, multipartBoundary, parseMultipart, parseMultipartBody } from "#shared/http/multipart";
import type { RouteDefinition } from "#shared/http/route";

const CRLF = "\r\n";

function body(boundary: string, parts: string[], { preamble = "", epilogue = CRLF } = {}): Buffer {
  return Buffer.from(
    `${preamble}${parts.map((part) => `--${boundary}${CRLF}${part}${CRLF}`).join("")}--${boundary}--${epilogue}`,
    "latin1",
  );
}

const text = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"${CRLF}${CRLF}${value}`;

function issueOf(run: () => unknown): { status: number; fields: string[] } {
  try {
    run();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { status: error.statusCode, fields: error instanceof ValidationError ? error.errors.map((issue) => issue.field) : [] };
  }
  throw new Error("expected an error");
}

describe("Function: parseMultipart", () => {
  it("reads text fields and files, keeping file bytes exactly", () => {
    // Prepare
    const bytes = Buffer.from([0x30, 0x82, 0x00, 0x0d, 0x0a, 0xff, 0x2d, 0x2d]);
    const raw = Buffer.concat([
      Buffer.from(`--b${CRLF}${text("integrationType", "azure")}${CRLF}--b${CRLF}`),
      Buffer.from(
        `Content-Disposition: form-data; name="azureCert"; filename="sso.cer"${CRLF}Content-Type: application/pkix-cert${CRLF}${CRLF}`,
      ),
      bytes,
      Buffer.from(`${CRLF}--b--${CRLF}`),
    ]);
    // Act
    const fields = parseMultipart(raw, "b");
    // Assess
    expect(fields.integrationType).toBe("azure");
    expect(fields.azureCert).toEqual({ filename: "sso.cer", contentType: "application/pkix-cert", content: bytes });
  });

  it("keeps an empty file (it is not dropped) and defaults its content type", () => {
    const fields = parseMultipart(body("b", [`Content-Disposition: form-data; name="azureCert"; filename="empty.pem"${CRLF}${CRLF}`]), "b");
    expect(fields.azureCert).toEqual({ filename: "empty.pem", contentType: "application/octet-stream", content: Buffer.alloc(0) });
  });

  it("ignores a preamble, the epilogue and transport padding after boundaries", () => {
    const raw = Buffer.from(`ignored preamble${CRLF}--b  ${CRLF}${text("a", "1")}${CRLF}--b--${CRLF}epilogue --b garbage`);
    expect({ ...parseMultipart(raw, "b") }).toEqual({ a: "1" });
  });

  it("accepts a body whose close delimiter has no trailing CRLF", () => {
    expect({ ...parseMultipart(body("b", [text("a", "1")], { epilogue: "" }), "b") }).toEqual({ a: "1" });
  });

  it("keeps text that merely looks like a boundary inside a value", () => {
    // (RFC 2046: a line may not start with the delimiter, so encoders pick a boundary absent from the content.)
    const value = `line1${CRLF}-b not a delimiter${CRLF}x--b mid-line --b--`;
    expect(parseMultipart(body("b", [text("a", value)]), "b").a).toBe(value);
  });

  it("decodes UTF-8 names, %22-escaped quotes, filename* and Windows paths", () => {
    const raw = Buffer.from(
      [
        `--b`,
        `Content-Disposition: form-data; name="say %22hi%22"`,
        ``,
        `ünïcödé`,
        `--b`,
        `Content-Disposition: form-data; name="f1"; filename="C:\\certs\\sso.cer"`,
        ``,
        `x`,
        `--b`,
        `Content-Disposition: form-data; name="f2"; filename="fallback.pem"; filename*=UTF-8''%E2%82%AC%20cert.pem`,
        ``,
        `y`,
        `--b--`,
      ].join(CRLF),
      "utf8",
    );
    const fields = parseMultipart(raw, "b");
    expect(fields['say "hi"']).toBe("ünïcödé");
    expect(fields.f1).toMatchObject({ filename: "C:\\certs\\sso.cer" });
    expect(fields.f2).toMatchObject({ filename: "€ cert.pem" });
  });

  it("treats header names and the disposition type case-insensitively and unfolds folded headers", () => {
    const raw = body("b", [`content-DISPOSITION: Form-Data;${CRLF} name="a"${CRLF}${CRLF}1`]);
    expect(parseMultipart(raw, "b").a).toBe("1");
  });

  it("returns an object without a prototype, so __proto__ and constructor are ordinary fields", () => {
    const fields = parseMultipart(body("b", [text("__proto__", "x"), text("constructor", "y"), text("files", "z")]), "b");
    expect(Object.getPrototypeOf(fields)).toBeNull();
    expect(Object.keys(fields)).toEqual(["__proto__", "constructor", "files"]);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it.each([
    ["no closing delimiter", Buffer.from(`--b${CRLF}${text("a", "1")}${CRLF}`), ["body"]],
    ["the boundary never occurs", Buffer.from("a=1&b=2"), ["body"]],
    ["no CRLF after the boundary", Buffer.from(`--bX${CRLF}${text("a", "1")}${CRLF}--b--`), ["body"]],
    ["a part without Content-Disposition", body("b", [`Content-Type: text/plain${CRLF}${CRLF}1`]), ["body"]],
    ["a part without headers", body("b", [`${CRLF}1`]), ["body"]],
    ["a disposition that is not form-data", body("b", [`Content-Disposition: attachment; name="a"${CRLF}${CRLF}1`]), ["body"]],
    ["a disposition without a name", body("b", [`Content-Disposition: form-data; filename="x"${CRLF}${CRLF}1`]), ["body"]],
    ["an unterminated quoted name", body("b", [`Content-Disposition: form-data; name="a${CRLF}${CRLF}1`]), ["body"]],
    ["a header line without a colon", body("b", [`Content-Disposition: form-data; name="a"${CRLF}junk${CRLF}${CRLF}1`]), ["body"]],
    ["a part whose headers never end", Buffer.from(`--b${CRLF}Content-Disposition: form-data; name="a"${CRLF}--b--`), ["body"]],
    [
      "more than 20 parts",
      body(
        "b",
        Array.from({ length: 21 }, (_, i) => text(`f${i}`, "1")),
      ),
      ["body"],
    ],
    ["a field sent twice", body("b", [text("a", "1"), text("a", "2")]), ["a"]],
    [
      "text that is not UTF-8",
      Buffer.concat([Buffer.from(`--b${CRLF}${text("a", "")}`), Buffer.from([0xc3, 0x28]), Buffer.from(`${CRLF}--b--`)]),
      ["a"],
    ],
  ])("rejects %s with 400", (_case, raw, fields) => {
    expect(issueOf(() => parseMultipart(raw, "b"))).toEqual({ status: 400, fields });
  });

  // Round trip: any set of distinct field names with arbitrary text and file bytes comes back unchanged.
  it("parses whatever a conforming encoder produces (property)", () => {
    const boundary = "----prop-7Qx_z";
    const name = fc.string({ minLength: 1, maxLength: 20 }).filter((n) => !/[\r\n"%\\]/.test(n));
    const value = fc.oneof(
      fc.string({ maxLength: 200 }).map((s) => s.replace(/\r\n--/g, "")),
      fc.record({ filename: name, content: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) }),
    );
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(name, value), { maxLength: 8, selector: ([n]) => n }), (entries) => {
        const encoded = Buffer.concat([
          ...entries.flatMap(([fieldName, fieldValue]) =>
            typeof fieldValue === "string"
              ? [Buffer.from(`--${boundary}${CRLF}${text(fieldName, fieldValue)}${CRLF}`)]
              : [
                  Buffer.from(
                    `--${boundary}${CRLF}Content-Disposition: form-data; name="${fieldName}"; filename="${fieldValue.filename}"${CRLF}${CRLF}`,
                  ),
                  fieldValue.content,
                  Buffer.from(CRLF),
                ],
          ),
          Buffer.from(`--${boundary}--${CRLF}`),
        ]);
        // A file's bytes could contain the delimiter by chance; a real encoder picks another boundary then.
        fc.pre(entries.every(([, v]) => typeof v === "string" || !v.content.includes(`${CRLF}--${boundary}`)));
        const parsed = parseMultipart(encoded, boundary);
        // (Object key order puts integer-like names first, so compare as sets.)
        expect(Object.keys(parsed).sort()).toEqual(entries.map(([n]) => n).sort());
        for (const [fieldName, fieldValue] of entries) {
          if (typeof fieldValue === "string") expect(parsed[fieldName]).toBe(fieldValue);
          else
            expect(parsed[fieldName]).toEqual({
              filename: fieldValue.filename,
              contentType: "application/octet-stream",
              content: fieldValue.content,
            });
        }
      }),
      { numRuns: 300 },
    );
  });

  // Fuzz: no input makes the parser crash or answer anything but a typed 400.
  it("answers any byte sequence with fields or a 400, never another error (property)", () => {
    const fragments = fc.constantFrom(
      "--b",
      "--b--",
      CRLF,
      `${CRLF}${CRLF}`,
      'Content-Disposition: form-data; name="a"',
      '; filename="f"',
      "x",
      "\u00ff",
      ":",
      ";",
      '"',
    );
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 400 }).map((a) => Buffer.from(a)),
      fc.array(fragments, { maxLength: 40 }).map((list) => Buffer.from(list.join(""), "latin1")),
    );
    fc.assert(
      fc.property(bytes, (raw) => {
        try {
          parseMultipart(raw, "b");
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe("Function: multipartBoundary", () => {
  it.each([
    ["multipart/form-data; boundary=abc", "abc"],
    ["multipart/form-data;boundary=abc", "abc"],
    ['multipart/form-data; boundary="a b:c"', "a b:c"],
    ["multipart/form-data; charset=utf-8; BOUNDARY=x_y-z", "x_y-z"],
    ["multipart/form-data; boundary=a;b", "a"],
  ])("reads %s", (contentType, boundary) => {
    expect(multipartBoundary(contentType)).toBe(boundary);
  });

  it.each([
    "multipart/form-data",
    "multipart/form-data; boundary=",
    `multipart/form-data; boundary=${"a".repeat(71)}`,
    'multipart/form-data; boundary="ends with space "',
    "multipart/form-data; boundary=a{b}",
  ])("rejects %s with 400", (contentType) => {
    expect(issueOf(() => multipartBoundary(contentType))).toEqual({ status: 400, fields: ["body"] });
  });
});

describe("Function: headerParameters", () => {
  it("skips parameters without a value and keeps the first of repeated ones", () => {
    const parsed = headerParameters('form-data; flag; name="a"; name="b"; filename=plain.pem');
    expect(parsed.value).toBe("form-data");
    expect(Object.fromEntries(parsed.parameters)).toEqual({ name: "a", filename: "plain.pem" });
  });

  it('unescapes \\" and \\\\ inside quoted strings only', () => {
    expect(headerParameters('x; name="a\\"b\\\\c\\d"').parameters.get("name")).toBe('a"b\\c\\d');
  });
});

describe("Function: parseMultipartBody", () => {
  const route = { maxBodyBytes: 100 } as RouteDefinition;
  const event = (contentType: string | undefined, raw: Buffer) =>
    ({
      headers: contentType ? { "Content-Type": contentType } : {},
      body: raw.toString("base64"),
      isBase64Encoded: true,
    }) as unknown as APIGatewayProxyEvent;

  it("decodes the base64 body API Gateway delivers for binary media types", () => {
    expect({ ...parseMultipartBody(event("Multipart/Form-Data; boundary=b", body("b", [text("a", "1")])), route) }).toEqual({ a: "1" });
  });

  it("answers 415 for another or a missing content type", () => {
    expect(() => parseMultipartBody(event("application/json", Buffer.from("{}")), route)).toThrow(UnsupportedMediaTypeError);
    expect(() => parseMultipartBody(event(undefined, Buffer.from("x")), route)).toThrow(UnsupportedMediaTypeError);
  });

  it("answers 413 over the route's limit and 400 for an empty body", () => {
    expect(() => parseMultipartBody(event("multipart/form-data; boundary=b", Buffer.alloc(101)), route)).toThrow(PayloadTooLargeError);
    expect(issueOf(() => parseMultipartBody(event("multipart/form-data; boundary=b", Buffer.alloc(0)), route))).toEqual({
      status: 400,
      fields: ["body"],
    });
  });
});
