import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Match } from "aws-cdk-lib/assertions";
import { afterAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { productTemplates, synthesize } from "./synthesize.ts";

describe("HTTP on the stack: compression, CORS origins from context, CORS on gateway errors", { timeout: 240_000 }, () => {
  const outdirs: string[] = [];
  const synthesizeWith = (context: Record<string, unknown> = {}) => {
    const outdir = mkdtempSync(join(tmpdir(), "cdk-http-"));
    outdirs.push(outdir);
    return synthesize(outdir, { context });
  };
  afterAll(() => {
    for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
  });

  it("compresses bodies from 1 KiB, allows any origin by default and says so on every function and gateway error", async () => {
    const { templates, all } = await productTemplates();
    const root = templates[0]!.template;
    root.hasResourceProperties("AWS::ApiGateway::RestApi", { MinimumCompressionSize: 1024 });
    const functions = Object.values(all.findResources("AWS::Lambda::Function"));
    expect(functions).toHaveLength(routes.length + 7);
    // Every function but the tenant authorizer, whose answers are gateway responses (checked below).
    const answering = functions.filter((fn) => fn.Properties.Environment.Variables.CORS_ALLOWED_ORIGINS !== undefined);
    expect(answering).toHaveLength(routes.length + 5);
    for (const fn of answering) expect(fn.Properties.Environment.Variables.CORS_ALLOWED_ORIGINS).toBe("*");
    const gatewayResponses = Object.values(root.findResources("AWS::ApiGateway::GatewayResponse"));
    expect(gatewayResponses.map((response) => response.Properties.ResponseType).sort()).toEqual([
      "ACCESS_DENIED",
      "DEFAULT_4XX",
      "DEFAULT_5XX",
      "INVALID_API_KEY",
      "MISSING_AUTHENTICATION_TOKEN",
      "QUOTA_EXCEEDED",
      "REQUEST_TOO_LARGE",
      "THROTTLED",
      "UNAUTHORIZED",
    ]);
    for (const response of gatewayResponses) {
      expect(response.Properties.ResponseParameters["gatewayresponse.header.Access-Control-Allow-Origin"]).toBe("'*'");
    }
    all.hasResourceProperties("AWS::ApiGateway::Method", {
      HttpMethod: "OPTIONS",
      Integration: Match.objectLike({
        IntegrationResponses: [
          Match.objectLike({ ResponseParameters: Match.objectLike({ "method.response.header.Access-Control-Allow-Origin": "'*'" }) }),
        ],
      }),
    });
  });

  it("takes the allowed origins from context corsAllowedOrigins: preflight, functions and gateway errors", () => {
    const single = synthesizeWith({ corsAllowedOrigins: "https://ops.example.com" });
    const singleAnswering = Object.values(single.all.findResources("AWS::Lambda::Function")).filter(
      (fn) => fn.Properties.Environment.Variables.CORS_ALLOWED_ORIGINS !== undefined,
    );
    expect(singleAnswering).toHaveLength(routes.length + 5);
    for (const fn of singleAnswering) expect(fn.Properties.Environment.Variables.CORS_ALLOWED_ORIGINS).toBe("https://ops.example.com");
    const singleResponses = Object.values(single.templates[0]!.template.findResources("AWS::ApiGateway::GatewayResponse"));
    for (const response of singleResponses) {
      expect(response.Properties.ResponseParameters["gatewayresponse.header.Access-Control-Allow-Origin"]).toBe(
        "'https://ops.example.com'",
      );
    }
    const preflight = JSON.stringify(single.all.findResources("AWS::ApiGateway::Method", { Properties: { HttpMethod: "OPTIONS" } }));
    expect(preflight).toContain("https://ops.example.com");
    expect(preflight).not.toContain(`"'*'"`);

    const several = synthesizeWith({ corsAllowedOrigins: "https://a.example.com, https://b.example.com" });
    const fn = Object.values(several.all.findResources("AWS::Lambda::Function")).find(
      (candidate) => candidate.Properties.Environment.Variables.CORS_ALLOWED_ORIGINS !== undefined,
    )!;
    expect(fn.Properties.Environment.Variables.CORS_ALLOWED_ORIGINS).toBe("https://a.example.com,https://b.example.com");
    for (const response of Object.values(several.templates[0]!.template.findResources("AWS::ApiGateway::GatewayResponse"))) {
      expect(response.Properties.ResponseParameters["gatewayresponse.header.Access-Control-Allow-Origin"]).toBe(
        "method.request.header.Origin",
      );
      expect(response.Properties.ResponseParameters["gatewayresponse.header.Vary"]).toBe("'Origin'");
    }
  });
});
