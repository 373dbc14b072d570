import { describe, expect, it } from "vitest";
import {
  type AccountSettingsClient,
  type CustomResourceEvent,
  ensureCloudWatchRole,
  handleEvent,
  physicalResourceId,
} from "#infra/custom-resources/api-gateway-cloudwatch-role";

const ours = "arn:aws:iam::111122223333:role/FieldOperations-ApiGatewayCloudWatchRole-abc";
const theirs = "arn:aws:iam::111122223333:role/SomeoneElsesApiGatewayLogs";

/** An account's API Gateway setting and its roles, in memory: the stubbed SDK. */
function account(options: { set?: string; roles?: string[]; failSets?: number; failWith?: string } = {}) {
  const state = { arn: options.set, sets: [] as string[], failSets: options.failSets ?? 0 };
  const client: AccountSettingsClient = {
    cloudWatchRoleArn: async () => state.arn,
    roleExists: async (arn) => (options.roles ?? [ours, theirs]).includes(arn),
    setCloudWatchRoleArn: async (arn) => {
      if (state.failSets > 0) {
        state.failSets -= 1;
        throw Object.assign(new Error("The role ARN does not have required permissions set to API Gateway"), {
          name: options.failWith ?? "BadRequestException",
        });
      }
      state.sets.push(arn);
      state.arn = arn;
    },
  };
  return { state, client };
}
const noWait = { sleep: async () => {} };
const event = (RequestType: CustomResourceEvent["RequestType"]): CustomResourceEvent => ({
  RequestType,
  ResponseURL: "https://cloudformation-response.example/presigned",
  StackId: "arn:aws:cloudformation:eu-west-1:111122223333:stack/FieldOperations/1",
  RequestId: "request-1",
  LogicalResourceId: "ApiGatewayCloudWatchRoleSetting",
  ...(RequestType === "Create" ? {} : { PhysicalResourceId: physicalResourceId }),
  ResourceProperties: { RoleArn: ours },
});

describe("API Gateway CloudWatch role custom resource", () => {
  it("sets this stack's role when the account and region have none (a first deploy anywhere)", async () => {
    const { state, client } = account();
    expect(await ensureCloudWatchRole(event("Create"), client, noWait)).toEqual({ roleArn: ours, set: true });
    expect(state.sets).toEqual([ours]);
  });

  it("leaves a working role that is already set alone (a second stack in the account finds it)", async () => {
    const { state, client } = account({ set: theirs });
    expect(await ensureCloudWatchRole(event("Create"), client, noWait)).toEqual({ roleArn: theirs, set: false });
    expect(await ensureCloudWatchRole(event("Update"), client, noWait)).toEqual({ roleArn: theirs, set: false });
    expect(state.sets).toEqual([]);
  });

  it("sets its role when the one the setting names was deleted (logging would fail with it)", async () => {
    const { state, client } = account({ set: theirs, roles: [ours] });
    expect(await ensureCloudWatchRole(event("Update"), client, noWait)).toEqual({ roleArn: ours, set: true });
    expect(state.sets).toEqual([ours]);
  });

  it("does nothing on delete: the setting and the retained role outlive the stack", async () => {
    const { state, client } = account({ set: ours });
    expect(await ensureCloudWatchRole(event("Delete"), client, noWait)).toBeUndefined();
    expect(state.arn).toBe(ours);
    expect(state.sets).toEqual([]);
  });

  it("retries while a just-created role has not reached API Gateway, and gives up on other errors", async () => {
    const waits: number[] = [];
    const propagating = account({ failSets: 2 });
    const outcome = await ensureCloudWatchRole(event("Create"), propagating.client, {
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(outcome).toEqual({ roleArn: ours, set: true });
    expect(waits).toHaveLength(2);
    const denied = account({ failSets: 1, failWith: "AccessDeniedException" });
    await expect(ensureCloudWatchRole(event("Create"), denied.client, noWait)).rejects.toThrow(/required permissions/);
    const never = account({ failSets: 100 });
    await expect(ensureCloudWatchRole(event("Create"), never.client, { ...noWait, attempts: 3 })).rejects.toThrow();
    expect(never.state.failSets).toBe(97);
  });

  it("answers CloudFormation on every path with one fixed physical id, a failure included", async () => {
    const logged: string[] = [];
    const log = (line: string) => logged.push(line);
    const answers: Array<{ url: string; body: Record<string, unknown> }> = [];
    const send = async (url: string, body: string) => {
      answers.push({ url, body: JSON.parse(body) });
    };
    await handleEvent(event("Create"), { client: account().client, send, log });
    await handleEvent(event("Update"), { client: account({ set: theirs }).client, send, log });
    await handleEvent(event("Delete"), { client: account({ set: ours }).client, send, log });
    const broken: AccountSettingsClient = {
      cloudWatchRoleArn: async () => {
        throw new Error("AccessDenied: apigateway:GET");
      },
      roleExists: async () => true,
      setCloudWatchRoleArn: async () => {},
    };
    await handleEvent(event("Create"), { client: broken, send, log });
    expect(answers.map((answer) => answer.url)).toEqual(Array(4).fill(event("Create").ResponseURL));
    expect(answers.map((answer) => [answer.body.Status, answer.body.PhysicalResourceId])).toEqual([
      ["SUCCESS", physicalResourceId],
      ["SUCCESS", physicalResourceId],
      ["SUCCESS", physicalResourceId],
      ["FAILED", physicalResourceId],
    ]);
    expect(answers[0]?.body.Data).toEqual({ RoleArn: ours, SetByThisStack: "true" });
    expect(answers[1]?.body.Data).toEqual({ RoleArn: theirs, SetByThisStack: "false" });
    expect(answers[3]?.body.Reason).toMatch(/AccessDenied/);
    expect(logged[3]).toMatch(/AccessDenied/);
    expect(answers[0]?.body).toMatchObject({ RequestId: "request-1", LogicalResourceId: "ApiGatewayCloudWatchRoleSetting" });
  });
});
