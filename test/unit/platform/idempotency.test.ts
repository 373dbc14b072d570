import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ValidationError } from "#shared/domain/errors";
import { buildOpenApiDocument } from "#shared/http/openapi";
import { parseIdempotencyKey, requestFingerprint } from "#shared/http/idempotency";
import { GZIP_ABOVE_BYTES, packAnswer, unpackAnswer } from "#shared/store/idempotency-store";
import { routes } from "#functions/routes";

describe("Function: parseIdempotencyKey", () => {
  it.each(["a", "3f0c9a52-5b7e-4c1e-9a53-6f1d2b8e4a10", "order:2026-11-24#1", "k".repeat(255)])("accepts %j", (key) => {
    expect(parseIdempotencyKey(key)).toBe(key);
  });

  it.each(["", " ", "a b", "k".repeat(256), "clé", "tab\tkey", "line\nkey"])("refuses %j with 400 idem-400", (key) => {
    expect(() => parseIdempotencyKey(key)).toThrow(ValidationError);
    try {
      parseIdempotencyKey(key);
    } catch (error) {
      expect((error as ValidationError).failedCode).toBe("idem-400");
      expect((error as ValidationError).errors[0]?.field).toBe("Idempotency-Key");
    }
  });

  it("leaves a request without the header alone", () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });
});

describe("Function: requestFingerprint", () => {
  it("replaces file bytes by their SHA-256 and drops undefined keys", () => {
    const bytes = Buffer.from("certificate");
    expect(requestFingerprint({ params: undefined, body: { file: { bytes, name: "a.pem" }, list: [1, bytes] } })).toEqual({
      body: {
        file: { bytes: { sha256: createHash("sha256").update("certificate").digest("hex") }, name: "a.pem" },
        list: [1, { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }],
      },
    });
  });

  it("gives equal bytes equal fingerprints and different bytes different ones", () => {
    const of = (text: string) => JSON.stringify(requestFingerprint({ file: Buffer.from(text) }));
    expect(of("same")).toBe(of("same"));
    expect(of("same")).not.toBe(of("other"));
  });
});

describe("Functions: packAnswer / unpackAnswer", () => {
  it("keeps small answers as they are", () => {
    const answer = { statusCode: 201, headers: { "content-type": "application/json" }, body: JSON.stringify({ status: true }) };
    const packed = packAnswer(answer);
    expect(packed.gzippedBody).toBeUndefined();
    expect(unpackAnswer(packed)).toEqual(answer);
  });

  it("gzips large bodies (a DynamoDB item holds at most 400 KB) and restores them exactly", () => {
    const body = JSON.stringify({ data: Array.from({ length: 20_000 }, (_, index) => ({ index, name: `visit ${index}` })) });
    expect(body.length).toBeGreaterThan(GZIP_ABOVE_BYTES);
    const packed = packAnswer({ statusCode: 200, headers: { etag: '"2"' }, body });
    expect(packed.body).toBeUndefined();
    expect(packed.gzippedBody?.byteLength).toBeLessThan(body.length / 5);
    expect(unpackAnswer(packed)).toEqual({ statusCode: 200, headers: { etag: '"2"' }, body });
  });

  it("keeps header values as strings", () => {
    expect(packAnswer({ statusCode: 200, headers: { "x-count": 3, "x-flag": true }, body: "{}" }).headers).toEqual({
      "x-count": "3",
      "x-flag": "true",
    });
  });
});

describe("Route flags in the route table and the OpenAPI document", () => {
  const document = buildOpenApiDocument(routes, { title: "t", version: "1", description: "" });
  const operation = (route: (typeof routes)[number]) => (document.paths[route.path] as Record<string, any>)[route.method.toLowerCase()];

  it("makes every creating POST, dispatch, on-demand runs and driver progress idempotent, each with tableWrite for its records", () => {
    const idempotent = routes
      .filter((route) => route.idempotent)
      .map((route) => route.operationId)
      .sort();
    expect(idempotent).toEqual(
      [
        "createAppIntegration",
        "createDataType",
        "createHub",
        "createRecord",
        "createRoutingConfiguration",
        "createRoutingResult",
        "createRoutingSchedule",
        "createVehicle",
        "createVisit",
        "createVisitBatch",
        "createVisitProofUpload",
        "dispatchRoutingResult",
        "reoptimizeRoutingResult",
        "reportVisitProgress",
      ].sort(),
    );
    for (const route of routes.filter((each) => each.idempotent)) expect(route.grants, route.operationId).toContain("tableWrite");
  });

  it("documents Idempotency-Key, Idempotency-Replayed, 409 and 422 on idempotent routes", () => {
    for (const route of routes.filter((each) => each.idempotent)) {
      const documented = operation(route);
      expect(
        documented.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`),
        route.operationId,
      ).toContain("header:Idempotency-Key");
      expect(Object.keys(documented.responses), route.operationId).toEqual(expect.arrayContaining(["409", "422"]));
      const success = Object.entries(documented.responses).find(([status]) => status.startsWith("2"))?.[1] as {
        headers: Record<string, unknown>;
      };
      expect(Object.keys(success.headers), route.operationId).toContain("Idempotency-Replayed");
    }
  });

  it("documents ETag on versioned reads and writes, If-Match and 412 on versioned writes, and nothing on other routes", () => {
    for (const route of routes) {
      const documented = operation(route);
      const headerNames = documented.parameters
        .filter((parameter: { in: string }) => parameter.in === "header")
        .map((parameter: { name: string }) => parameter.name);
      const takesIfMatch = route.versioned === true && route.method !== "GET";
      expect(headerNames.includes("If-Match"), route.operationId).toBe(takesIfMatch);
      expect("412" in documented.responses, route.operationId).toBe(takesIfMatch);
      if (route.versioned && route.method === "GET")
        expect(Object.keys(documented.responses["200"].headers ?? {}), route.operationId).toContain("ETag");
    }
  });
});
