import { Match, type Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { matchesFilterPattern } from "#local/stream-filter";
import { dispatchHistoryEntity } from "#shared/domain/visits/dispatch-history";
import { eventEntities, eventsOfChange, streamEntities, streamFilterPattern } from "#shared/domain/webhooks/state-changes";
import { webhookQueueDefinition, webhookWorkerTimeoutSeconds } from "#shared/queue/definitions";
import { functionActions, productTemplates, type SynthesizedTemplates } from "./synthesize.ts";

describe("Stack: webhooks and events", () => {
  let synthesized: SynthesizedTemplates;
  let root: Template;

  beforeAll(async () => {
    synthesized = await productTemplates();
    root = synthesized.templates[0]!.template;
  });

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
      FilterCriteria: { Filters: [{ Pattern: Match.anyValue() }] },
    });
  });

  it("filters the stream on AWS, in the local poller and in the publisher's switch by one list of entities, exactly", () => {
    const mappings = Object.values(root.findResources("AWS::Lambda::EventSourceMapping")) as Array<{
      Properties: { FilterCriteria?: { Filters: Array<{ Pattern: string }> } };
    }>;
    const filtered = mappings.flatMap((mapping) => mapping.Properties.FilterCriteria?.Filters ?? []);
    expect(filtered).toHaveLength(1);
    const pattern = JSON.parse(filtered[0]!.Pattern) as typeof streamFilterPattern;
    // AWS: the synthesized pattern is the declaration, and names exactly the entities the switch reads.
    expect(pattern).toEqual(streamFilterPattern);
    // …which are the events' entities and the one whose dispatches the consumer appends to history.
    expect(pattern.dynamodb.NewImage.entity.S).toEqual([...streamEntities]);
    expect(new Set(streamEntities)).toEqual(new Set([...eventEntities, dispatchHistoryEntity]));

    // One change per entity that means an event, and items of other entities in the same states.
    const at = new Date("2026-11-25T09:00:00Z");
    // Typed by the declaration: an entity added to it needs its change here.
    const changes: Record<(typeof eventEntities)[number], { before: Record<string, unknown>; after: Record<string, unknown> }> = {
      routingResult: {
        before: { status: "ongoing" },
        after: { _id: "r1", organizationId: "org", hubId: "h", configurationId: "c", status: "done", finishedTime: "2026-11-25 09:00:00" },
      },
      runClaim: {
        before: { status: "CLAIMED" },
        after: { status: "SKIPPED", message: { organizationId: "org", scheduleId: "s", slot: "2026-11-25T09:00Z" } },
      },
      dataType: {
        before: { import: { phase: "running" } },
        after: { _id: "d", organizationId: "org", import: { phase: "done", uploadId: "u", processed: 1 } },
      },
      visit: {
        before: { lastTransition: { version: 1, from: "PLANNED", to: "ASSIGNED" } },
        after: {
          _id: "v1",
          organizationId: "org",
          hubId: "h",
          lastTransition: { version: 2, from: "ASSIGNED", to: "EN_ROUTE", source: "driver", at: "2026-11-25T09:00:00Z" },
        },
      },
      liveRoute: {
        before: { resultId: "r1", progress: { version: 1, observed: {}, eta: {} } },
        after: {
          organizationId: "org",
          vehicleId: "van",
          hubId: "h",
          resultId: "r1",
          progress: { version: 2, observed: {}, eta: { v1: { eta: "2026-11-25 09:40", risk: "LATE", etaN: 1, riskN: 1 } } },
        },
      },
    };
    const otherEntities = ["hub", "vehicle", "configuration", "schedule", "webhook", "record", "constructor", "toString"];
    const candidates = [...Object.keys(changes), ...otherEntities];
    const streamRecord = (entity: string) => ({ eventName: "MODIFY", dynamodb: { NewImage: { entity: { S: entity } } } });
    // The local poller: passes exactly the listed entities' records (as Lambda's filter does), and no removal.
    expect(candidates.filter((entity) => matchesFilterPattern(streamRecord(entity), streamFilterPattern))).toEqual([...streamEntities]);
    expect(
      matchesFilterPattern({ eventName: "REMOVE", dynamodb: { OldImage: { entity: { S: "routingResult" } } } }, streamFilterPattern),
    ).toBe(false);
    // The switch: every listed entity's change means events; the same change on any other entity means none.
    const meaningful = candidates.filter((entity) =>
      Object.values(changes).some(({ before, after }) => eventsOfChange({ ...before, entity }, { ...after, entity }, at).length > 0),
    );
    expect(meaningful).toEqual([...eventEntities]);
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
