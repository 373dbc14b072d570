import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { afterAll, describe, expect, it } from "vitest";
import { buildApp } from "#infra/app";
import { repositoryRoot } from "#infra/repository-root";
import { checkStartEnvironment, logRetentionPeriods, parseDeployContext } from "#shared/config/deploy-config";
import { environmentSchema } from "#shared/config/env";

const parse = (context: Record<string, unknown>) => parseDeployContext((key) => context[key]);
// An App without an outdir makes a temporary directory of its own and leaves it behind.
const outdir = mkdtempSync(join(tmpdir(), "cdk-deploy-config-"));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));
const synthWith = (context: Record<string, unknown>) => () =>
  buildApp(new App({ outdir, context: { "aws:cdk:bundling-stacks": [], ...context } }));

describe("Config validated before deploy or start: one schema for every context flag", () => {
  it("accepts the shipped cdk.json values and typical flags, converting them", () => {
    expect(
      parse({
        jwtIssuer: "https://issuer.example.com",
        jwtJwksUri: "https://issuer.example.com/.well-known/jwks.json",
        appTimeZone: "Asia/Jakarta",
        runWorkerMaxConcurrency: "40",
        tenantAutoEnroll: "true",
        sourceMaps: false,
        alarmEmail: "oncall@example.com",
      }),
    ).toMatchObject({ appTimeZone: "Asia/Jakarta", runWorkerMaxConcurrency: 40, tenantAutoEnroll: true, sourceMaps: false });
  });

  it.each([
    ["runWorkerMaxConcurrency", "abc", /runWorkerMaxConcurrency: must be a whole number from 2 to 1000, got "abc"/],
    ["maxActiveRunsPerOrg", "-1", /maxActiveRunsPerOrg: must be a whole number from 1 to 1000/],
    ["appTimeZone", "Mars/Olympus", /appTimeZone: must be an IANA time zone .* got "Mars\/Olympus"/],
    ["authorizerCacheTtlSeconds", "7200", /authorizerCacheTtlSeconds: .*0 to 3600/],
    ["tenantAutoEnroll", "yes", /tenantAutoEnroll: must be true or false/],
    ["jwtJwksUri", "http://issuer/jwks", /jwtJwksUri: must be an https:\/\/ URL/],
    ["runWorkerMemoryMb", "64", /runWorkerMemoryMb/],
    ["importRetentionDays", "1.5", /importRetentionDays/],
    ["logRetentionDays", "31", /logRetentionDays: must be a CloudWatch Logs retention period/],
    ["accessLogRetentionDays", "0", /accessLogRetentionDays: must be a CloudWatch Logs retention period/],
    ["logGroupClass", "cold", /logGroupClass/],
    ["xraySamplingReservoir", "-1", /xraySamplingReservoir: must be a whole number/],
    ["xraySamplingRate", "2", /xraySamplingRate: must be a number from 0 to 1/],
    ["webAclArn", "arn:aws:wafv2:us-east-1:123456789012:global/webacl/x/y", /webAclArn: must be the ARN of a regional WAF web ACL/],
  ])("refuses %s=%s naming the flag", (key, value, message) => {
    expect(() => parse({ [key]: value })).toThrow(message);
  });

  it("knows every retention period CloudWatch Logs accepts, as the CDK lists them", () => {
    const cdkPeriods = Object.values(RetentionDays).filter(
      (days): days is RetentionDays => typeof days === "number" && days !== RetentionDays.INFINITE,
    );
    expect([...logRetentionPeriods].sort((a, b) => a - b)).toEqual([...cdkPeriods].sort((a, b) => a - b));
    expect(parse({ logRetentionDays: "14", logGroupClass: "standard", xraySamplingRate: "0.05" })).toMatchObject({
      logRetentionDays: 14,
      logGroupClass: "STANDARD",
      xraySamplingRate: 0.05,
    });
  });

  it("names every bad flag at once", () => {
    expect(() => parse({ runWorkerMaxConcurrency: "abc", appTimeZone: "Mars/Olympus" })).toThrow(
      /runWorkerMaxConcurrency[\s\S]*appTimeZone|appTimeZone[\s\S]*runWorkerMaxConcurrency/,
    );
  });

  it("fails synth (buildApp) before building anything", () => {
    expect(synthWith({ runWorkerMaxConcurrency: "abc" })).toThrow(/Invalid CDK context[\s\S]*runWorkerMaxConcurrency/);
    expect(synthWith({ appTimeZone: "Mars/Olympus" })).toThrow(/appTimeZone/);
  });
});

describe("npm start refuses a bad environment, naming the variable", () => {
  it("checkStartEnvironment: time zone, travel providers document, the functions' own variables", () => {
    expect(() => checkStartEnvironment({}, environmentSchema)).not.toThrow();
    expect(() => checkStartEnvironment({ APP_TIMEZONE: "Mars/Olympus" }, environmentSchema)).toThrow(/APP_TIMEZONE: must be an IANA/);
    expect(() => checkStartEnvironment({ TRAVEL_PROVIDERS_JSON: '{"providers":5}' }, environmentSchema)).toThrow(
      /TRAVEL_PROVIDERS_JSON: not a travel providers document.*providers/,
    );
    expect(() => checkStartEnvironment({ TRAVEL_PROVIDERS_JSON: "{not json" }, environmentSchema)).toThrow(/TRAVEL_PROVIDERS_JSON/);
    expect(() => checkStartEnvironment({ MAX_ACTIVE_RUNS_PER_ORG: "-1" }, environmentSchema)).toThrow(/MAX_ACTIVE_RUNS_PER_ORG/);
  });

  it("the real npm start exits 2 before starting anything", { timeout: 120_000 }, () => {
    const result = spawnSync(process.execPath, ["--import", "tsx", "local/start.ts"], {
      cwd: repositoryRoot,
      env: { ...process.env, APP_TIMEZONE: "Mars/Olympus", TRAVEL_PROVIDERS_JSON: '{"providers":5}' },
      encoding: "utf8",
      timeout: 110_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("APP_TIMEZONE");
    expect(result.stderr).toContain("TRAVEL_PROVIDERS_JSON");
  });
});
