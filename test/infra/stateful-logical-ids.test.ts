import { beforeAll, describe, expect, it } from "vitest";
import { productTemplates, type SynthesizedTemplates } from "./synthesize.ts";

/**
 * The logical ids of everything that holds data or that another install's API Gateway may depend on.
 * CloudFormation replaces a resource whose logical id changes: for these, a refactor that moves or
 * renames a construct would delete a queue with its messages or orphan a retained table and create an
 * empty one. Changing an id here is an upgrade with data migration, never a refactor.
 */
const pinned: Record<string, string> = {
  TableCD117FA1: "AWS::DynamoDB::GlobalTable",
  FileBucketCDFCD6DE: "AWS::S3::Bucket",
  AccessLogBucketDA470295: "AWS::S3::Bucket",
  WebhookSecretKeyE2159639: "AWS::KMS::Key",
  EventBus7B8748AA: "AWS::Events::EventBus",
  RunQueue294CC30B: "AWS::SQS::Queue",
  RunSpilloverQueue19A1139B: "AWS::SQS::Queue",
  DuePageQueue434F6E10: "AWS::SQS::Queue",
  RunDeadLetterQueue9C9454BD: "AWS::SQS::Queue",
  ImportQueueB0839EEE: "AWS::SQS::Queue",
  ImportDeadLetterQueue8CEE3CE0: "AWS::SQS::Queue",
  WebhookQueueA9D318EA: "AWS::SQS::Queue",
  WebhookDeadLetterQueue6DD1CE59: "AWS::SQS::Queue",
  WebhookPublisherFailureQueueA5B12A91: "AWS::SQS::Queue",
  ApiGatewayCloudWatchRoleDDBA6CB2: "AWS::IAM::Role",
  ApiGatewayCloudWatchRoleSetting5F5C233A: "Custom::ApiGatewayCloudWatchRole",
};
const statefulTypes = new Set([
  "AWS::DynamoDB::GlobalTable",
  "AWS::DynamoDB::Table",
  "AWS::S3::Bucket",
  "AWS::KMS::Key",
  "AWS::SQS::Queue",
  "AWS::Events::EventBus",
]);

let synthesized: SynthesizedTemplates;
beforeAll(async () => {
  synthesized = await productTemplates();
}, 300_000);

describe("Stateful resources keep their logical ids", { timeout: 300_000 }, () => {
  it("every pinned resource is in the root stack under its id and type", () => {
    const resources = synthesized.templates[0]!.template.toJSON().Resources as Record<string, { Type: string }>;
    for (const [id, type] of Object.entries(pinned)) expect(resources[id]?.Type, id).toBe(type);
  });

  it("every stateful or retained resource of every template is pinned (a new one must be added here)", () => {
    for (const { name, template } of synthesized.templates) {
      const resources = template.toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string }>;
      const unpinned = Object.entries(resources)
        .filter(([, resource]) => statefulTypes.has(resource.Type) || resource.DeletionPolicy === "Retain")
        .filter(([id]) => !(name === synthesized.templates[0]!.name && id in pinned))
        .map(([id, resource]) => `${name}/${id} (${resource.Type})`);
      expect(unpinned).toEqual([]);
    }
  });
});
