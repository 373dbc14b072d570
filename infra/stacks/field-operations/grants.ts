import { type CfnElement, Names, Stack, Validations } from "aws-cdk-lib";
import type { TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { type IRole, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { Bucket } from "aws-cdk-lib/aws-s3";
import { type RouteGrant, routeGrantActions } from "#shared/http/route";
import { objectKeys, objectKinds } from "#shared/store/keys";
import type { JobQueues, WebhookMessaging } from "#infra/stacks/field-operations/jobs";

/** How roles, the root stack's and the area stacks', receive what the route table's grants allow. */
export interface ProductGrants {
  /**
   * Explicit actions per grant (routeGrantActions), never CDK's grantRead/WriteData groups. Bucket
   * grants reach one kind of object (objectKinds): `area` names the API area (or job) whose objects they are.
   */
  grant: (role: IRole, grant: RouteGrant, area?: string) => void;
  /** A wildcard resource is acknowledged on the role that holds it, for that resource only. */
  acknowledgeWildcard: (role: IRole, resource: string, reason: string) => void;
  /** cdk-nag names a resource by its token: `<Table….Arn>` in this stack, the parameter CDK passes into a nested one. */
  nagArn: (role: IRole, construct: TableV2 | Bucket) => string;
}

export function productGrants(
  stack: Stack,
  resources: { table: TableV2; bucket: Bucket; queues: JobQueues; webhooks: WebhookMessaging },
): ProductGrants {
  const { table, bucket } = resources;
  const { runQueue, spilloverQueue, importQueue } = resources.queues;
  const { webhookQueue, webhookDeadLetterQueue, webhookKey, eventBus } = resources.webhooks;

  const nagArn = (role: IRole, construct: TableV2 | Bucket) => {
    const element = construct.node.defaultChild as CfnElement;
    return Stack.of(role) === stack ? `<${stack.getLogicalId(element)}.Arn>` : `<referenceto${Names.uniqueId(element)}Arn>`;
  };
  const acknowledgeWildcard = (role: IRole, resource: string, reason: string) =>
    Validations.of(role).acknowledge({ id: `AwsSolutions::AwsSolutions-IAM5[Resource::${resource}]`, reason });

  const grant = (role: IRole, grant: RouteGrant, area?: string) => {
    const actions = routeGrantActions[grant];
    const onTable = actions.filter((action) => action.startsWith("dynamodb:"));
    if (onTable.length > 0) {
      role.addToPrincipalPolicy(new PolicyStatement({ actions: onTable, resources: [table.tableArn] }));
      // Only queries reach the secondary indexes (by hub, due index).
      if (onTable.includes("dynamodb:Query")) {
        role.addToPrincipalPolicy(new PolicyStatement({ actions: ["dynamodb:Query"], resources: [`${table.tableArn}/index/*`] }));
        acknowledgeWildcard(
          role,
          `${nagArn(role, table)}/index/*`,
          "Only dynamodb:Query, on this table's own secondary indexes (lists by hub, the due index).",
        );
      }
    }
    // The import grants reach only the uploaded exports and the import queue.
    const isImportGrant = grant.startsWith("import");
    const onBucket = actions.filter((action) => action.startsWith("s3:"));
    if (onBucket.length > 0) {
      if (grant.startsWith("proof")) {
        // The proof grants reach only proofs of delivery; ListBucket only for keys under proofs/.
        const onObjects = onBucket.filter((action) => action !== "s3:ListBucket");
        role.addToPrincipalPolicy(
          new PolicyStatement({ actions: onObjects, resources: [bucket.arnForObjects(objectKeys.visitProofPattern)] }),
        );
        acknowledgeWildcard(
          role,
          `${nagArn(role, bucket)}/${objectKeys.visitProofPattern}`,
          "Only the proofs of delivery of every organization (the proof routes' objects); keys are derived by the code from the organization, the visit and the proof id.",
        );
        if (onBucket.includes("s3:ListBucket"))
          role.addToPrincipalPolicy(
            new PolicyStatement({
              actions: ["s3:ListBucket"],
              resources: [bucket.bucketArn],
              conditions: { StringLike: { "s3:prefix": [objectKeys.visitProofPattern] } },
            }),
          );
      } else if (isImportGrant) {
        const onObjects = onBucket.filter((action) => action !== "s3:ListBucket");
        if (onObjects.length > 0) {
          role.addToPrincipalPolicy(
            new PolicyStatement({ actions: onObjects, resources: [bucket.arnForObjects(objectKeys.legacyExportPattern)] }),
          );
          acknowledgeWildcard(
            role,
            `${nagArn(role, bucket)}/${objectKeys.legacyExportPattern}`,
            "Only the uploaded legacy exports of every organization (the import functions' objects); keys are chosen by the code.",
          );
        }
        // A bucket-level action: its resource is the bucket (a condition on s3:prefix would not reach the 404-or-403 choice of an object read).
        if (onBucket.includes("s3:ListBucket"))
          role.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:ListBucket"], resources: [bucket.bucketArn] }));
      } else {
        const kind = bucketKindOfArea[area ?? ""];
        if (!kind)
          throw new Error(`Bucket grant ${grant} for ${area ?? "a role"} without an object kind: add the area to bucketKindOfArea`);
        role.addToPrincipalPolicy(new PolicyStatement({ actions: onBucket, resources: [bucket.arnForObjects(`${kind.prefix}*`)] }));
        acknowledgeWildcard(
          role,
          `${nagArn(role, bucket)}/${kind.prefix}*`,
          `Only the ${kind.prefix} objects of every organization (what ${area} stores); keys are per organization and chosen by the code.`,
        );
        // Objects of the earlier layout (`org/<o>/<kind>/…`) are still read (and certificates deleted) where they are.
        const legacyActions = onBucket.filter((action) => kind.legacyActions.includes(action));
        if (legacyActions.length > 0) {
          role.addToPrincipalPolicy(new PolicyStatement({ actions: legacyActions, resources: [bucket.arnForObjects(kind.legacyPattern)] }));
          acknowledgeWildcard(
            role,
            `${nagArn(role, bucket)}/${kind.legacyPattern}`,
            `Only ${area}'s objects of the earlier key layout, read (certificates also deleted) where they are; nothing new is written there.`,
          );
        }
      }
    }
    const onQueue = actions.filter((action) => action.startsWith("sqs:"));
    const queueArns =
      grant === "webhookQueueSend"
        ? [webhookQueue.queueArn, webhookDeadLetterQueue.queueArn]
        : isImportGrant
          ? [importQueue.queueArn]
          : [runQueue.queueArn, spilloverQueue.queueArn];
    if (onQueue.length > 0) role.addToPrincipalPolicy(new PolicyStatement({ actions: onQueue, resources: queueArns }));
    const onKey = actions.filter((action) => action.startsWith("kms:"));
    if (onKey.length > 0) role.addToPrincipalPolicy(new PolicyStatement({ actions: onKey, resources: [webhookKey.keyArn] }));
    const onBus = actions.filter((action) => action.startsWith("events:"));
    if (onBus.length > 0) role.addToPrincipalPolicy(new PolicyStatement({ actions: onBus, resources: [eventBus.eventBusArn] }));
    // Reads of usage only: the list of usage plans (GetUsagePlans by key) and usage plans' usage (GetUsage).
    // Not each usage plan's own ARN: a usage plan depends on the stage, the stage's deployment on the area stacks (a cycle).
    const onApiGateway = actions.filter((action) => action.startsWith("apigateway:"));
    if (onApiGateway.length > 0) {
      role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: onApiGateway,
          resources: [
            `arn:${stack.partition}:apigateway:${stack.region}::/usageplans`,
            `arn:${stack.partition}:apigateway:${stack.region}::/usageplans/*/usage`,
          ],
        }),
      );
      acknowledgeWildcard(
        role,
        "arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/*/usage",
        "Only apigateway:GET of usage plans' usage (GetUsage), for GET /v3/usage: the caller's own key is chosen by the code; naming each usage plan would make the API area stacks depend on the stage (a cycle).",
      );
    }
  };
  return { grant, acknowledgeWildcard, nagArn };
}

/**
 * The object kind each bucket-granting area (and the run worker, as routing-results) reaches: its
 * prefix, and the earlier layout's objects it may still read (and, for certificates, delete).
 */
const bucketKindOfArea: Record<string, { prefix: string; legacyPattern: string; legacyActions: readonly string[] }> = {
  "app-integrations": {
    prefix: objectKinds.certificates,
    legacyPattern: "org/*/app-integrations/*",
    legacyActions: ["s3:GetObject", "s3:GetObjectVersion", "s3:DeleteObject", "s3:DeleteObjectVersion"],
  },
  "routing-results": {
    prefix: objectKinds.results,
    legacyPattern: "org/*/routing-results/*",
    legacyActions: ["s3:GetObject", "s3:GetObjectVersion"],
  },
};
