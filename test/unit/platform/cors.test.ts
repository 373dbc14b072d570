import { afterEach, describe, expect, it } from "vitest";
import { appConfig, resetAppConfig } from "#shared/config/env";
import { bearerChallenge, corsHeaders } from "#shared/http/responses";

describe("Function: corsHeaders", () => {
  it("answers any origin with * when every origin is allowed", () => {
    expect(corsHeaders("*", "https://a.example")).toEqual({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "X-Request-Id,ETag,Idempotency-Replayed,Retry-After",
    });
    expect(corsHeaders("*", undefined)["access-control-allow-origin"]).toBe("*");
  });

  it("echoes a listed origin exactly, with Vary: Origin, and allows nothing else", () => {
    const allowed = ["https://app.example.com", "http://localhost:5173"];
    expect(corsHeaders(allowed, "http://localhost:5173")).toEqual({
      "access-control-allow-origin": "http://localhost:5173",
      vary: "Origin",
      "access-control-expose-headers": "X-Request-Id,ETag,Idempotency-Replayed,Retry-After",
    });
    for (const origin of [undefined, "https://APP.example.com", "https://app.example.com/", "http://app.example.com", "null"]) {
      expect(corsHeaders(allowed, origin), String(origin)).toEqual({ vary: "Origin" });
    }
  });
});

describe("Function: bearerChallenge", () => {
  it("names invalid_token only when a bearer token was sent", () => {
    expect(bearerChallenge(undefined)).toBe("Bearer");
    expect(bearerChallenge("Basic dXNlcjpwYXNz")).toBe("Bearer");
    expect(bearerChallenge("Bearer ")).toBe("Bearer");
    expect(bearerChallenge("Bearer abc.def.ghi")).toBe('Bearer error="invalid_token"');
    expect(bearerChallenge("bearer abc")).toBe('Bearer error="invalid_token"');
  });
});

describe("Setting: CORS_ALLOWED_ORIGINS", () => {
  const original = process.env.CORS_ALLOWED_ORIGINS;
  afterEach(() => {
    if (original === undefined) delete process.env.CORS_ALLOWED_ORIGINS;
    else process.env.CORS_ALLOWED_ORIGINS = original;
    resetAppConfig();
  });
  const parse = (value: string | undefined) => {
    if (value === undefined) delete process.env.CORS_ALLOWED_ORIGINS;
    else process.env.CORS_ALLOWED_ORIGINS = value;
    resetAppConfig();
    return appConfig().CORS_ALLOWED_ORIGINS;
  };

  it("defaults to * and reads a comma-separated list of origins", () => {
    expect(parse(undefined)).toBe("*");
    expect(parse("*")).toBe("*");
    expect(parse("")).toBe("*");
    expect(parse(" https://app.example.com ,http://localhost:5173,")).toEqual(["https://app.example.com", "http://localhost:5173"]);
  });

  it("refuses entries that are not exactly an origin", () => {
    for (const value of ["https://app.example.com/", "https://app.example.com/path", "app.example.com", "https://a.example,nope"]) {
      expect(() => parse(value), value).toThrow(/is not an origin/);
    }
  });
});
