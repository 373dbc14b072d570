import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Match, type Template } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookQueueDefinition, webhookWorkerTimeoutSeconds } from "#shared/queue/definitions";
import { functionActions, synthesize, type SynthesizedStack } from "./synthesize.ts";

describe("Stack: webhooks and events", () => {
  let outdir: string;
  let synthesized: SynthesizedStack;
  let root: Template;

  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), "cdk-out-"));
    synthesized = synthesize(outdir);
    root = synthesized.templates[0]!.template;
  });
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it("creates the event bus with its name and ARN as stack outputs", () => {
    root.resourceCountIs("AWS::Events::EventBus", 1);
    const outputs = root.toJSON().Outputs as Record<string, unknown>;
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(["EventBusName", "EventBusArn"]));
  });

  it("streams the table's writes (new and old images) to the publisher, filtered to the items that mean events", () => {
    root.hasResourceProperties("AWS::DynamoDB::GlobalTable", { StreamSpecification: { StreamViewType: "NEW_AND_OLD_IMAGES" } });
    root.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      StartingPosition: "TRIM_HORIZON",
      BisectBatchOnFunctionError: true,
      FilterCriteria: { Filters: [{ Pattern: Match.stringLikeRegexp("routingResult.*runClaim.*dataType") }] },
    });
  });

  it("delivers through an encrypted SQS queue with a dead-letter queue and an alarm on it", () => {
    const queues = root.findResources("AWS::SQS::Queue", {
      Properties: { VisibilityTimeout: webhookQueueDefinition.visibilityTimeoutSeconds },
    });
    expect(Object.keys(queues)).toHaveLength(1);
    const queue = Object.values(queues)[0] as {
      Properties: {
        RedrivePolicy: { deadLetterTargetArn: { "Fn::GetAtt": [string, string] }; maxReceiveCount: number };
        SqsManagedSseEnabled: boolean;
      };
    };
    expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBe(webhookQueueDefinition.maxReceiveCount);
    expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    const deadLetterId = queue.Properties.RedrivePolicy.deadLetterTargetArn["Fn::GetAtt"][0];
    expect(deadLetterId).toMatch(/^WebhookDeadLetterQueue/);
    root.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateNumberOfMessagesVisible",
      Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [deadLetterId, "QueueName"] } }],
      Threshold: 0,
      AlarmActions: Match.anyValue(),
    });
    root.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      ScalingConfig: { MaximumConcurrency: webhookQueueDefinition.maxConcurrency },
    });
    expect(webhookQueueDefinition.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * webhookWorkerTimeoutSeconds);
  });

  it("gives the delivery worker a per-organization share of its workers: all but one", () => {
    const slots = webhookQueueDefinition.maxConcurrency - 1;
    root.hasResourceProperties("AWS::Lambda::Function", {
      Description: Match.stringLikeRegexp("webhook delivery attempt"),
      Environment: { Variables: Match.objectLike({ WEBHOOK_WORKER_SLOTS_PER_TENANT: String(slots) }) },
    });
  });

  it("keeps signing secrets under a rotating KMS key: only creating a webhook encrypts, only the delivery worker decrypts", () => {
    root.hasResourceProperties("AWS::KMS::Key", { EnableKeyRotation: true });
    expect(JSON.stringify(functionActions(synthesized, "createWebhookFunction"))).toContain("kms:Encrypt");
    expect(JSON.stringify(functionActions(synthesized, "createWebhookFunction"))).not.toContain("kms:Decrypt");
    expect(JSON.stringify(functionActions(synthesized, "getWebhookFunction"))).not.toContain("kms:");
    expect(JSON.stringify(functionActions(synthesized, "WebhookDeliveryFunction"))).toContain("kms:Decrypt");
    expect(JSON.stringify(functionActions(synthesized, "WebhookPublisherFunction"))).toContain("events:PutEvents");
  });
});
