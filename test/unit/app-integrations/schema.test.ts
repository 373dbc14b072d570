import { describe, expect, it } from "vitest";
import { appIntegrationCreateFormSchema, appIntegrationUpdateFormSchema, isAbsoluteHttpsUrl } from "#shared/domain/app-integrations/schema";
import { ValidationError } from "#shared/domain/errors";
import { parseWith } from "#shared/domain/validation";

const certificateFile = { filename: "sso.pem", contentType: "application/x-pem-file", content: Buffer.from("x") };
const validForm = { integrationType: "azure", azureAuthUrl: "https://login.microsoftonline.com/t/saml2", azureCert: certificateFile };

function issues(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.errors;
    throw error;
  }
  throw new Error("expected a ValidationError");
}

describe("Function: isAbsoluteHttpsUrl", () => {
  it.each([
    "https://login.microsoftonline.com/0f1e/saml2",
    "HTTPS://Login.Example.com",
    "https://sso.example.com:8443/path?query=1#frag",
    "https://[2001:db8::1]/sso",
  ])("accepts %s", (url) => {
    expect(isAbsoluteHttpsUrl(url)).toBe(true);
  });

  it.each([
    "http://login.example.com",
    "https:login.example.com",
    "https:/login.example.com",
    "//login.example.com",
    "/saml2",
    "login.example.com",
    "ftp://example.com",
    "javascript:alert(1)",
    "https://user:pass@login.example.com",
    "https://user@login.example.com",
    "https://login.example.com/a b",
    "https://login.example.com/\ttab",
    "https://",
  ])("rejects %s", (url) => {
    expect(isAbsoluteHttpsUrl(url)).toBe(false);
  });
});

describe("Schema: appIntegrationCreateFormSchema", () => {
  it("trims the URL and keeps the file object as sent", () => {
    const form = parseWith(appIntegrationCreateFormSchema, { ...validForm, azureAuthUrl: "  https://a.example.com/x  " });
    expect(form).toEqual({ ...validForm, azureAuthUrl: "https://a.example.com/x" });
  });

  it("accepts a URL of exactly 2048 characters and rejects 2049", () => {
    const base = "https://a.example.com/";
    const url2048 = base + "a".repeat(2048 - base.length);
    expect(parseWith(appIntegrationCreateFormSchema, { ...validForm, azureAuthUrl: url2048 }).azureAuthUrl).toHaveLength(2048);
    expect(issues(() => parseWith(appIntegrationCreateFormSchema, { ...validForm, azureAuthUrl: `${url2048}a` }))[0]?.field).toBe(
      "azureAuthUrl",
    );
  });

  it("names every missing field as required", () => {
    expect(issues(() => parseWith(appIntegrationCreateFormSchema, {}))).toEqual([
      { field: "integrationType", message: "integrationType is required." },
      { field: "azureAuthUrl", message: "azureAuthUrl is required." },
      { field: "azureCert", message: "azureCert is required." },
    ]);
  });

  it("tells a text field from a file", () => {
    expect(issues(() => parseWith(appIntegrationCreateFormSchema, { ...validForm, azureCert: "-----BEGIN CERTIFICATE-----" }))).toEqual([
      { field: "azureCert", message: "azureCert must be a file upload (a part with a filename)." },
    ]);
    expect(issues(() => parseWith(appIntegrationCreateFormSchema, { ...validForm, azureAuthUrl: certificateFile }))).toEqual([
      { field: "azureAuthUrl", message: "azureAuthUrl must be a text field." },
    ]);
  });

  it("rejects unknown fields by name, including prototype-looking ones", () => {
    const form = Object.assign(Object.create(null), validForm, { files: "x" });
    Object.defineProperty(form, "__proto__", { value: "y", enumerable: true });
    expect(
      issues(() => parseWith(appIntegrationCreateFormSchema, form))
        .map((issue) => issue.field)
        .sort(),
    ).toEqual(["__proto__", "files"]);
  });

  it("rejects an integrationType other than azure", () => {
    expect(issues(() => parseWith(appIntegrationCreateFormSchema, { ...validForm, integrationType: "Azure" }))[0]).toEqual({
      field: "integrationType",
      message: "integrationType must be one of: azure.",
    });
  });
});

describe("Schema: appIntegrationUpdateFormSchema", () => {
  it("accepts any single field and refuses an empty form", () => {
    expect(parseWith(appIntegrationUpdateFormSchema, { azureCert: certificateFile })).toEqual({ azureCert: certificateFile });
    expect(parseWith(appIntegrationUpdateFormSchema, { integrationType: "azure" })).toEqual({ integrationType: "azure" });
    expect(issues(() => parseWith(appIntegrationUpdateFormSchema, {}))[0]?.field).toBe("body");
  });
});
