import { beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { importWorkerGrants, tickGrants, workerGrants } from "#infra/stacks/field-operations-stack";
import { type RouteGrant, routeGrantActions } from "#shared/http/route";
import { functionActions, functionStatements, productTemplates, type SynthesizedTemplates } from "./synthesize.ts";

/** What every function may do besides its grants: send traces to X-Ray, write its own log group's streams. */
const baseline = ["logs:CreateLogStream", "logs:PutLogEvents", "xray:PutTelemetryRecords", "xray:PutTraceSegments"];
const forbidden = ["dynamodb:Scan", "dynamodb:BatchWriteItem", "dynamodb:*", "s3:*", "sqs:*", "*"];

const expectedActions = (grants: readonly RouteGrant[]) =>
  [...new Set([...grants.flatMap((grant) => routeGrantActions[grant]), ...baseline])].sort();

describe("Least privilege: each function's role allows exactly the actions its route's grants name", { timeout: 240_000 }, () => {
  let synthesized: SynthesizedTemplates;
  beforeAll(async () => {
    synthesized = await productTemplates();
  });

  const functions = () => [
    ...routes.map((route) => ({ id: `${route.operationId}Function`, grants: route.grants ?? [] })),
    { id: "SchedulerTickFunction", grants: tickGrants },
    { id: "RoutingRunFunction", grants: workerGrants, consumes: true },
    { id: "LegacyImportFunction", grants: importWorkerGrants, consumes: true },
  ];
  // The SQS event source polls the run queue with the worker's role (CDK's grantConsumeMessages).
  const consumeActions = [
    "sqs:ChangeMessageVisibility",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
    "sqs:GetQueueUrl",
    "sqs:ReceiveMessage",
  ];
  const ownActions = (id: string, consumes = false) =>
    functionActions(synthesized, id).filter((action) => !baseline.includes(action) && !(consumes && consumeActions.includes(action)));

  it("lists every function's actions; none has Scan, a wildcard action or BatchWriteItem without its grant, none has an action its grants do not name", () => {
    const listing: string[] = [];
    for (const { id, grants, consumes } of functions()) {
      const actions = ownActions(id, consumes);
      listing.push(`${id} [${grants.join(", ")}]: ${actions.join(" ")}`);
      // BatchWriteItem only where a route names its own grant for it (position samples, docs/api/execution.md).
      for (const action of forbidden)
        if (!(action === "dynamodb:BatchWriteItem" && grants.includes("positionHistoryWrite"))) expect(actions, id).not.toContain(action);
      expect(
        actions.every((action) => !action.includes("*")),
        `${id}: ${actions.join(" ")}`,
      ).toBe(true);
      const allowed = new Set(grants.flatMap((grant) => routeGrantActions[grant]));
      expect(
        actions.filter((action) => !allowed.has(action)),
        id,
      ).toEqual([]);
    }
    console.log(listing.join("\n"));
  });

  it("gives every function all the actions of its grants (so the code it runs is not denied)", () => {
    for (const { id, grants, consumes } of functions()) {
      const actions = ownActions(id, consumes);
      expect(actions, id).toEqual(expectedActions(grants).filter((action) => !baseline.includes(action)));
    }
  });

  it("lets the tenant authorizer read one item of the table (GetItem) and nothing else", () => {
    expect(functionActions(synthesized, "TenantAuthorizerFunction").filter((action) => !baseline.includes(action))).toEqual([
      "dynamodb:GetItem",
    ]);
    const onTable = functionStatements(synthesized, "TenantAuthorizerFunction").filter((statement) =>
      [statement.Action].flat().includes("dynamodb:GetItem"),
    );
    expect(JSON.stringify(onTable.map((statement) => statement.Resource))).not.toContain("/index/");
  });

  it("gives the import grants only the uploaded exports (imports/*) and the import queue", () => {
    const importFunctions = [
      ...routes.filter((route) => route.grants?.some((grant) => grant.startsWith("import"))).map((route) => `${route.operationId}Function`),
      "LegacyImportFunction",
    ];
    expect(importFunctions.length).toBe(3);
    for (const id of importFunctions) {
      for (const statement of functionStatements(synthesized, id)) {
        const actions = [statement.Action].flat() as string[];
        const resources = JSON.stringify(statement.Resource);
        if (actions.some((action) => action.startsWith("s3:") && action !== "s3:ListBucket"))
          expect(resources, id).toMatch(/"\/imports\/\*"/);
        // ListBucket only on the bucket itself, alone in its statement.
        if (actions.includes("s3:ListBucket")) {
          expect(actions, id).toEqual(["s3:ListBucket"]);
          expect(resources, id).not.toContain("/");
        }
        if (actions.some((action) => action.startsWith("sqs:SendMessage"))) expect(resources, id).toContain("ImportQueue");
      }
    }
    // Reading an export may tell a missing one (404) from a forbidden one: S3 answers a missing object 403 without ListBucket.
    for (const id of ["importDataTypeFunction", "LegacyImportFunction"])
      expect(ownActions(id, id === "LegacyImportFunction"), id).toContain("s3:ListBucket");
    // The upload form is signed by a function that may only put exports in the bucket.
    expect(ownActions("createDataTypeImportUploadFunction").filter((action) => !action.startsWith("dynamodb:"))).toEqual(["s3:PutObject"]);
    // It reads the tenant record (the plan bounds the upload): table reads only.
    expect(
      ownActions("createDataTypeImportUploadFunction")
        .filter((action) => action.startsWith("dynamodb:"))
        .sort(),
    ).toEqual(["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"]);
  });

  it("gives each bucket-using function only its kind of object: certificates for app integrations, results for routing results and the run worker", () => {
    const kindOf = (id: string) =>
      id === "RoutingRunFunction" || routes.find((route) => `${route.operationId}Function` === id)?.handler.includes("/routing-results/")
        ? "results"
        : "certificates";
    const bucketUsers = [
      ...routes
        .filter((route) => route.grants?.some((grant) => grant === "bucketRead" || grant === "bucketWrite"))
        .map((route) => `${route.operationId}Function`),
      "RoutingRunFunction",
    ];
    expect(bucketUsers.length).toBeGreaterThan(4);
    for (const id of bucketUsers) {
      const onObjects = functionStatements(synthesized, id).filter((statement) =>
        [statement.Action].flat().some((action) => action.startsWith("s3:")),
      );
      const resources = onObjects.map((statement) => JSON.stringify(statement.Resource));
      const legacy = kindOf(id) === "results" ? "/org/*/routing-results/*" : "/org/*/app-integrations/*";
      for (const resource of resources)
        expect(resource.includes(`"/${kindOf(id)}/*"`) || resource.includes(`"${legacy}"`), `${id}: ${resource}`).toBe(true);
      // Writes reach only the kind's own prefix; the earlier layout is read (certificates also deleted), never written.
      for (const statement of onObjects) {
        if ([statement.Action].flat().includes("s3:PutObject"))
          expect(JSON.stringify(statement.Resource), id).toContain(`/${kindOf(id)}/*`);
      }
    }
  });

  it("keeps read routes to GetItem, BatchGetItem and Query", () => {
    const readOnly = routes.filter(
      (route) => !route.grants?.some((grant) => grant === "tableWrite" || grant === "bucketWrite" || grant === "queueSend"),
    );
    expect(readOnly.length).toBeGreaterThan(10);
    for (const route of readOnly) {
      const tableActions = functionActions(synthesized, `${route.operationId}Function`).filter((action) => action.startsWith("dynamodb:"));
      expect(
        tableActions.every((action) => ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"].includes(action)),
        route.operationId,
      ).toBe(true);
    }
  });

  it("scopes table actions to the table, index access to Query, objects to the file bucket's objects", () => {
    for (const { id } of functions()) {
      for (const statement of functionStatements(synthesized, id)) {
        const resources = JSON.stringify(statement.Resource);
        const actions = [statement.Action].flat();
        if (resources.includes("/index/*")) expect(actions, id).toEqual(["dynamodb:Query"]);
        // X-Ray actions have no resource-level permissions; nothing else may use "*".
        if (resources === '"*"')
          expect(
            actions.every((action) => action.startsWith("xray:")),
            id,
          ).toBe(true);
      }
    }
  });

  it("lets every function write logs only to its own log group, with no managed policy (AWSLambdaBasicExecutionRole reaches every log group)", () => {
    let checked = 0;
    for (const { template } of synthesized.templates) {
      const roles = template.findResources("AWS::IAM::Role");
      const policies = Object.values(template.findResources("AWS::IAM::Policy"));
      for (const [functionId, fn] of Object.entries(template.findResources("AWS::Lambda::Function"))) {
        const roleId = fn.Properties.Role["Fn::GetAtt"][0] as string;
        expect(roles[roleId]?.Properties.ManagedPolicyArns, functionId).toBeUndefined();
        const logGroupId = fn.Properties.LoggingConfig.LogGroup.Ref as string;
        const logStatements = policies
          .filter((policy) => (policy.Properties.Roles as Array<{ Ref?: string }>).some((role) => role.Ref === roleId))
          .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
          .filter((statement) => [statement.Action].flat().some((action) => action.startsWith("logs:")));
        expect(logStatements.length, functionId).toBeGreaterThan(0);
        for (const statement of logStatements) {
          expect([statement.Action].flat().sort(), functionId).toEqual(["logs:CreateLogStream", "logs:PutLogEvents"]);
          expect(statement.Resource, functionId).toEqual({ "Fn::GetAtt": [logGroupId, "Arn"] });
        }
        checked++;
      }
    }
    expect(checked).toBe(routes.length + 7);
  });
});
