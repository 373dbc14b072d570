import { APIGatewayClient, GetAccountCommand, UpdateAccountCommand } from "@aws-sdk/client-api-gateway";
import { GetRoleCommand, IAMClient } from "@aws-sdk/client-iam";

/**
 * The custom resource that makes a first deploy work in any account and region: REST API access
 * logging needs API Gateway's account-level CloudWatch Logs role, a setting shared by every REST API
 * of the region. This resource reads it (GetAccount) and sets the role this stack created only when
 * none is set (or the role it names no longer exists); it never replaces a working role another
 * stack or the operator set, and does nothing on delete. So several stacks in one account: the
 * first sets it, the others find it. docs/operations.md, "The API Gateway CloudWatch role".
 *
 * It answers CloudFormation itself (a PUT to the presigned ResponseURL), so it needs no provider
 * framework function; every path answers, a failure included, so a deploy never waits an hour.
 */

/** What the handler needs of AWS, stubbed in the unit tests. */
export interface AccountSettingsClient {
  /** The role API Gateway writes logs as in this region, if any. */
  cloudWatchRoleArn(): Promise<string | undefined>;
  /** Whether an IAM role of this ARN exists. */
  roleExists(roleArn: string): Promise<boolean>;
  setCloudWatchRoleArn(roleArn: string): Promise<void>;
}

export interface CustomResourceEvent {
  RequestType: "Create" | "Update" | "Delete";
  ResponseURL: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  PhysicalResourceId?: string;
  ResourceProperties: { RoleArn?: string };
}

/** One physical id for the life of the stack: CloudFormation never replaces (so never deletes) it. */
export const physicalResourceId = "api-gateway-account-cloudwatch-role";

export interface Outcome {
  /** The role API Gateway logs as after this event. */
  roleArn: string;
  /** True only when this event set the account's setting. */
  set: boolean;
}

/**
 * Create/Update: keep a working role that is set; set `RoleArn` when none is set or the set one is
 * gone. Delete: nothing (the setting and the retained role outlive the stack: other stacks may use them).
 * A just-created role is not usable by API Gateway for a few seconds (IAM propagation): retried.
 */
export async function ensureCloudWatchRole(
  event: Pick<CustomResourceEvent, "RequestType" | "ResourceProperties">,
  client: AccountSettingsClient,
  options: { attempts?: number; delayMs?: (attempt: number) => number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<Outcome | undefined> {
  if (event.RequestType === "Delete") return undefined;
  const wanted = event.ResourceProperties.RoleArn;
  if (!wanted) throw new Error("RoleArn property is required");
  const current = await client.cloudWatchRoleArn();
  if (current && (await client.roleExists(current))) return { roleArn: current, set: false };
  const attempts = options.attempts ?? 8;
  const delayMs = options.delayMs ?? ((attempt: number) => Math.min(2000 * 2 ** attempt, 20_000));
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 0; ; attempt += 1) {
    try {
      await client.setCloudWatchRoleArn(wanted);
      return { roleArn: wanted, set: true };
    } catch (error) {
      // "The role ARN does not have required permissions set to API Gateway": the new role has not propagated yet.
      const retriable =
        (error as { name?: string }).name === "BadRequestException" || (error as { name?: string }).name === "TooManyRequestsException";
      if (!retriable || attempt + 1 >= attempts) throw error;
      await sleep(delayMs(attempt));
    }
  }
}

/** The body CloudFormation expects at ResponseURL. */
export function responseBody(event: CustomResourceEvent, result: { outcome?: Outcome; error?: unknown }): string {
  const failed = result.error !== undefined;
  return JSON.stringify({
    Status: failed ? "FAILED" : "SUCCESS",
    Reason: failed ? `API Gateway CloudWatch role: ${String((result.error as Error)?.message ?? result.error)}` : "OK",
    PhysicalResourceId: event.PhysicalResourceId ?? physicalResourceId,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
    Data: result.outcome ? { RoleArn: result.outcome.roleArn, SetByThisStack: String(result.outcome.set) } : {},
  });
}

/** The real client: API Gateway's account settings and IAM's GetRole. */
export function awsAccountSettingsClient(): AccountSettingsClient {
  const apiGateway = new APIGatewayClient({});
  const iam = new IAMClient({});
  return {
    cloudWatchRoleArn: async () => (await apiGateway.send(new GetAccountCommand({}))).cloudwatchRoleArn || undefined,
    roleExists: async (roleArn) => {
      const roleName = roleArn.split("/").pop() ?? "";
      try {
        await iam.send(new GetRoleCommand({ RoleName: roleName }));
        return true;
      } catch (error) {
        if ((error as { name?: string }).name === "NoSuchEntityException") return false;
        // Unknown (e.g. not allowed to look): keep what is set rather than overwrite someone's setting.
        return true;
      }
    },
    setCloudWatchRoleArn: async (roleArn) => {
      await apiGateway.send(new UpdateAccountCommand({ patchOperations: [{ op: "replace", path: "/cloudwatchRoleArn", value: roleArn }] }));
    },
  };
}

/** Lambda's entry (its second argument is Lambda's context, so the dependencies stay on handleEvent). */
export const handler = (event: CustomResourceEvent): Promise<void> => handleEvent(event);

export async function handleEvent(
  event: CustomResourceEvent,
  dependencies: { client?: AccountSettingsClient; send?: (url: string, body: string) => Promise<void>; log?: (line: string) => void } = {},
): Promise<void> {
  const send =
    dependencies.send ??
    (async (url: string, body: string) => {
      const response = await fetch(url, { method: "PUT", body, headers: { "content-type": "" } });
      if (!response.ok) throw new Error(`CloudFormation response PUT answered ${response.status}`);
    });
  let result: { outcome?: Outcome; error?: unknown };
  try {
    result = { outcome: await ensureCloudWatchRole(event, dependencies.client ?? awsAccountSettingsClient()) };
  } catch (error) {
    result = { error };
  }
  (dependencies.log ?? console.log)(
    JSON.stringify({ requestType: event.RequestType, ...result, error: result.error ? String(result.error) : undefined }),
  );
  await send(event.ResponseURL, responseBody(event, result));
}
