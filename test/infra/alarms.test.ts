import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Match } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { repositoryRoot } from "#infra/repository-root";
import { productTemplates, synthesize, type SynthesizedStack } from "./synthesize.ts";

describe("Operability: alarms to one SNS topic, X-Ray tracing", { timeout: 240_000 }, () => {
  let outdir: string;
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), "cdk-alarms-"));
    synthesized = synthesize(outdir, { context: { alarmEmail: "oncall@example.com" } });
  });
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  const root = () => synthesized.templates[0]!.template;
  const alarms = () => Object.values(synthesized.all.findResources("AWS::CloudWatch::Alarm"));

  it("has an SNS topic (TLS only) with the e-mail subscription from context alarmEmail, and every alarm notifies it", () => {
    root().hasResourceProperties("AWS::SNS::Subscription", { Protocol: "email", Endpoint: "oncall@example.com" });
    root().hasResourceProperties("AWS::SNS::TopicPolicy", {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } })]),
      },
    });
    for (const alarm of alarms()) expect(alarm.Properties.AlarmActions, alarm.Properties.AlarmDescription).toHaveLength(1);
  });

  it("has no subscription without alarmEmail", async () => {
    const { templates } = await productTemplates();
    templates[0]!.template.resourceCountIs("AWS::SNS::Subscription", 0);
    templates[0]!.template.resourceCountIs("AWS::SNS::Topic", 1);
  });

  it("alarms on the dead-letter queue's depth, the API's 5xx rate, tick failures and the tick nearing its timeout", () => {
    root().hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: "AWS/SQS",
      MetricName: "ApproximateNumberOfMessagesVisible",
      Threshold: 0,
      ComparisonOperator: "GreaterThanThreshold",
    });
    root().hasResourceProperties("AWS::CloudWatch::Alarm", {
      Threshold: 1,
      Metrics: Match.arrayWith([Match.objectLike({ Expression: "IF(requests >= 20, 100 * errors / requests, 0)" })]),
    });
    root().hasResourceProperties("AWS::CloudWatch::Alarm", { Namespace: "AWS/Lambda", MetricName: "Errors", Threshold: 0, Period: 60 });
    root().hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: "AWS/Lambda",
      MetricName: "Duration",
      Statistic: "Maximum",
      Threshold: 44_000,
    });
  });

  it("alarms on Lambda errors and throttles once per function group (each API area, the jobs), summing its functions", () => {
    const groupAlarms = alarms().filter((alarm) =>
      alarm.Properties.Metrics?.some((metric: { Expression?: string }) => metric.Expression?.includes("f0")),
    );
    const areaCount = synthesized.stack.areaStacks.length;
    expect(groupAlarms).toHaveLength(2 * (areaCount + 1));
    const summed = groupAlarms.filter((alarm) => /Errors/.test(alarm.Properties.AlarmDescription));
    const functionsCovered = summed.reduce(
      (count, alarm) => count + alarm.Properties.Metrics.filter((metric: { MetricStat?: unknown }) => metric.MetricStat).length,
      0,
    );
    // One per route plus the jobs (tick, run and import workers, webhook publisher and delivery); the authorizer has its own failure alarm.
    expect(functionsCovered).toBe(routes.length + 5);
    expect(alarms().length).toBeLessThan(routes.length);
  });

  it("traces every function with X-Ray, like the stage", () => {
    root().hasResourceProperties("AWS::ApiGateway::Stage", { TracingEnabled: true });
    const functions = Object.values(synthesized.all.findResources("AWS::Lambda::Function"));
    expect(functions).toHaveLength(routes.length + 7);
    for (const fn of functions) expect(fn.Properties.TracingConfig).toEqual({ Mode: "Active" });
  });

  it("has a runbook row in docs/operations.md for every alarm it creates, and no row for an alarm it lacks", () => {
    // Each alarm's description names its runbook row: (docs/operations.md, Runbook: "<name>").
    const fromTemplate = new Set(
      alarms().map((alarm) => {
        const name = /Runbook: "([^"]+)"/.exec(alarm.Properties.AlarmDescription ?? "")?.[1];
        expect(name, alarm.Properties.AlarmDescription).toBeDefined();
        return name;
      }),
    );
    const runbook = readFileSync(join(repositoryRoot, "docs/operations.md"), "utf8").split("\n## Runbook")[1]!.split("\n## ")[0]!;
    const documented = new Set(
      runbook
        .split("\n")
        .filter((line) => line.startsWith("| `"))
        .flatMap((line) => [...(line.split(" | ")[0] ?? "").matchAll(/`([A-Za-z0-9]+)`/g)].map(([, name]) => name)),
    );
    expect([...documented].sort()).toEqual([...fromTemplate].sort());
  });
});
