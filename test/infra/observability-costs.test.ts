import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { productTemplates, synthesize, type SynthesizedTemplates } from "./synthesize.ts";

const outdirs: string[] = [];
const synthesizeIn = (context: Record<string, unknown> = {}) => {
  const outdir = mkdtempSync(join(tmpdir(), "cdk-obs-"));
  outdirs.push(outdir);
  return synthesize(outdir, { context });
};
afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

type LogGroup = { Properties: { RetentionInDays?: number; LogGroupClass?: string } };
const logGroups = (synthesized: SynthesizedTemplates) =>
  Object.entries(synthesized.all.findResources("AWS::Logs::LogGroup") as Record<string, LogGroup>);
const groupsNamed = (synthesized: SynthesizedTemplates, pattern: RegExp) => logGroups(synthesized).filter(([id]) => pattern.test(id));
const samplingRule = (synthesized: SynthesizedTemplates) =>
  Object.values(synthesized.all.findResources("AWS::XRay::SamplingRule"))[0]?.Properties.SamplingRule as Record<string, unknown>;

describe("Logs and traces: what they cost", { timeout: 300_000 }, () => {
  let base: SynthesizedTemplates;
  beforeAll(async () => {
    base = await productTemplates();
  });

  it("samples the API stage at 1/s + 1 % by default, before X-Ray's default rule", () => {
    expect(samplingRule(base)).toMatchObject({
      ReservoirSize: 1,
      FixedRate: 0.01,
      ServiceName: "field-operations-api/v3",
      ServiceType: "AWS::ApiGateway::Stage",
      Priority: 9000,
      URLPath: "*",
    });
    expect(String(samplingRule(base).RuleName).length).toBeLessThanOrEqual(32);
  });

  it("keeps the API areas' groups and the access log in Infrequent Access, the jobs' groups (EMF metrics) Standard, 30 and 90 days", () => {
    const areas = groupsNamed(base, /Api[^/]*\/Logs/);
    expect(areas.length).toBeGreaterThan(5);
    for (const [id, group] of areas)
      expect(group.Properties, id).toMatchObject({ LogGroupClass: "INFREQUENT_ACCESS", RetentionInDays: 30 });
    const [access] = groupsNamed(base, /ApiAccessLogs/);
    expect(access?.[1].Properties).toMatchObject({ LogGroupClass: "INFREQUENT_ACCESS", RetentionInDays: 90 });
    const jobs = logGroups(base).filter(([id]) => !/Api[^/]*\/Logs|ApiAccessLogs|ApiExecutionLogs/.test(id));
    expect(jobs.length).toBeGreaterThan(3);
    for (const [id, group] of jobs) expect(group.Properties, id).toMatchObject({ LogGroupClass: "STANDARD", RetentionInDays: 30 });
  });

  it("takes retention, class and sampling from context, and refuses values AWS would not", () => {
    const tuned = synthesizeIn({
      logRetentionDays: 14,
      accessLogRetentionDays: 365,
      logGroupClass: "STANDARD",
      xraySamplingReservoir: 5,
      xraySamplingRate: 0.05,
    });
    expect(samplingRule(tuned)).toMatchObject({ ReservoirSize: 5, FixedRate: 0.05 });
    for (const [id, group] of groupsNamed(tuned, /Api[^/]*\/Logs/))
      expect(group.Properties, id).toMatchObject({ LogGroupClass: "STANDARD", RetentionInDays: 14 });
    expect(groupsNamed(tuned, /ApiAccessLogs/)[0]?.[1].Properties.RetentionInDays).toBe(365);
    expect(() => synthesizeIn({ logRetentionDays: 31 })).toThrow(
      /logRetentionDays: must be a CloudWatch Logs retention period .* got "31"/,
    );
    expect(() => synthesizeIn({ xraySamplingRate: 2 })).toThrow(/xraySamplingRate/);
    expect(() => synthesizeIn({ logGroupClass: "cold" })).toThrow(/logGroupClass/);
  });
});
