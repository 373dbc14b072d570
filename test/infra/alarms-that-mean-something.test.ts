import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repositoryRoot } from "#infra/repository-root";
import { publisherIteratorAgeAlarmMinutes } from "#infra/stacks/field-operations-stack";
import { authorizerFailureMessage } from "#shared/http/authorizer-failure";
import { productTemplates, type SynthesizedTemplates } from "./synthesize.ts";

let synthesized: SynthesizedTemplates;
beforeAll(async () => {
  synthesized = await productTemplates();
}, 300_000);

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };
const root = () => synthesized.templates[0]!.template;
const resources = () => root().toJSON().Resources as Record<string, Resource>;
const outputs = () => root().toJSON().Outputs as Record<string, { Value: unknown }>;
const idStartingWith = (type: string, prefix: string) => {
  const found = Object.entries(root().findResources(type)).filter(([id]) => id.startsWith(prefix));
  expect(
    found.map(([id]) => id),
    `${type} ${prefix}`,
  ).toHaveLength(1);
  return found[0]![0];
};
const alarmNamed = (prefix: string) => resources()[idStartingWith("AWS::CloudWatch::Alarm", prefix)]!;

describe("No silent loss of webhook events", { timeout: 300_000 }, () => {
  it("the stream → publisher mapping sends a batch that runs out of retries to a 14-day queue, alarmed at once", () => {
    const mappings = Object.values(root().findResources("AWS::Lambda::EventSourceMapping")).filter(
      (mapping) => mapping.Properties.StartingPosition === "TRIM_HORIZON",
    );
    expect(mappings).toHaveLength(1);
    const destination = mappings[0]!.Properties.DestinationConfig.OnFailure.Destination;
    const queueId = idStartingWith("AWS::SQS::Queue", "WebhookPublisherFailureQueue");
    expect(destination).toEqual({ "Fn::GetAtt": [queueId, "Arn"] });
    expect(resources()[queueId]!.Properties.MessageRetentionPeriod).toBe(14 * 24 * 3600);
    const alarm = alarmNamed("WebhookPublisherFailureAlarm");
    expect(alarm.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: "GreaterThanThreshold" });
    expect(JSON.stringify(alarm.Properties.Dimensions)).toContain(queueId);
    expect(alarm.Properties.AlarmActions).toHaveLength(1);
  });

  it("alarms when the publisher falls behind the stream (IteratorAge)", () => {
    const alarm = alarmNamed("WebhookPublisherIteratorAgeAlarm");
    expect(alarm.Properties).toMatchObject({
      MetricName: "IteratorAge",
      Namespace: "AWS/Lambda",
      Statistic: "Maximum",
      Threshold: publisherIteratorAgeAlarmMinutes * 60_000,
    });
    expect(JSON.stringify(alarm.Properties.Dimensions)).toContain("WebhookPublisherFunction");
  });
});

describe("Alarms that mean something", { timeout: 300_000 }, () => {
  const authorizerId = () => idStartingWith("AWS::Lambda::Function", "TenantAuthorizerFunction");

  it("the authorizer is in no Errors alarm (it throws Unauthorized for every bad token)", () => {
    for (const { template } of synthesized.templates) {
      for (const alarm of Object.values(template.findResources("AWS::CloudWatch::Alarm"))) {
        const text = JSON.stringify(alarm.Properties);
        if (text.includes('"Errors"')) expect(text).not.toContain(authorizerId());
      }
    }
  });

  it("counts the authorizer's own failures from its log lines, with their own alarm, and alarms on its throttles", () => {
    const filters = Object.values(root().findResources("AWS::Logs::MetricFilter"));
    const filter = filters.find((each) => each.Properties.MetricTransformations[0].MetricName === "AuthorizerFailures");
    expect(filter?.Properties.FilterPattern).toBe(`{ $.message = "${authorizerFailureMessage}" }`);
    expect(JSON.stringify(filter?.Properties.LogGroupName)).toContain("TenantAuthorizerFunctionLogs");
    expect(alarmNamed("AuthorizerFailureAlarm").Properties).toMatchObject({ MetricName: "AuthorizerFailures", Threshold: 0 });
    const throttles = alarmNamed("AuthorizerThrottlesAlarm");
    expect(throttles.Properties.MetricName).toBe("Throttles");
    expect(JSON.stringify(throttles.Properties.Dimensions)).toContain(authorizerId());
  });

  it("alarms on DynamoDB throttling of the table, and on the webhook queue's and its DLQ's oldest message", () => {
    const throttle = alarmNamed("TableThrottleAlarm");
    const names = (throttle.Properties.Metrics as Array<{ MetricStat?: { Metric: { MetricName: string } } }>).flatMap((metric) =>
      metric.MetricStat ? [metric.MetricStat.Metric.MetricName] : [],
    );
    expect(names.sort()).toEqual(["ReadThrottleEvents", "WriteThrottleEvents"]);
    for (const [alarm, queue] of [
      ["WebhookQueueAgeAlarm", "WebhookQueue"],
      ["WebhookDeadLetterQueueAgeAlarm", "WebhookDeadLetterQueue"],
    ] as const) {
      const properties = alarmNamed(alarm).Properties;
      expect(properties.MetricName).toBe("ApproximateAgeOfOldestMessage");
      expect(JSON.stringify(properties.Dimensions)).toContain(idStartingWith("AWS::SQS::Queue", queue));
    }
  });

  it("shows the webhook queue, its DLQ and the publisher's failure queue on the dashboard", () => {
    const body = JSON.stringify(Object.values(root().findResources("AWS::CloudWatch::Dashboard"))[0]!.Properties.DashboardBody);
    for (const label of ["webhookQueue", "webhookDeadLetterQueue", "publisherFailureQueue"]) expect(body).toContain(label);
  });

  it("outputs every alarm and queue the runbook names, under the name the runbook gives", () => {
    const runbook = readFileSync(join(repositoryRoot, "docs/operations.md"), "utf8").split("\n## Runbook")[1]!.split("\n## ")[0]!;
    const alarmsInRows = new Set(
      runbook
        .split("\n")
        .filter((line) => line.startsWith("| `"))
        .flatMap((line) => [...(line.split(" | ")[0] ?? "").matchAll(/`([A-Za-z0-9]+)`/g)].map(([, name]) => name!)),
    );
    // The area alarms live in their nested stacks; the jobs' are outputs as Job<name>.
    const outputOf = (name: string) => (["Errors", "Throttles"].includes(name) ? `Job${name}AlarmName` : `${name}AlarmName`);
    expect(alarmsInRows.size).toBeGreaterThan(15);
    for (const name of alarmsInRows) expect(outputs(), name).toHaveProperty(outputOf(name));
    // Every root alarm has its output.
    const rootAlarms = Object.keys(root().findResources("AWS::CloudWatch::Alarm"));
    const alarmOutputs = Object.keys(outputs()).filter((key) => key.endsWith("AlarmName"));
    expect(alarmOutputs).toHaveLength(rootAlarms.length);
    // The queues, as the runbook's preamble names them (the table's rows are alarms).
    const queuesInText = new Set([...runbook.split("| alarm |")[0]!.matchAll(/`([A-Za-z]*Queue)`/g)].map(([, name]) => name!));
    expect(queuesInText.size).toBeGreaterThanOrEqual(9);
    for (const queue of queuesInText) {
      expect(outputs(), queue).toHaveProperty(`${queue}Name`);
      expect(outputs(), queue).toHaveProperty(`${queue}Url`);
    }
    expect(outputs()).toHaveProperty("SchedulerTickRuleName");
    expect(outputs()).toHaveProperty("AlarmTopicArn");
  });
});
