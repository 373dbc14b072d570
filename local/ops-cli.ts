import { parseArgs } from "node:util";
import { CloudFormationClient, DescribeStacksCommand } from "@aws-sdk/client-cloudformation";
import { DisableRuleCommand, EnableRuleCommand, EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { LambdaClient, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from "@aws-sdk/client-lambda";
import { type OpsAws, type OpsCommand, opsCommands, runOps } from "#local/ops";

/** `npm run ops -- pause-runs|resume-runs --aws [--stack <name>]` (local/ops.ts). */
const usage = `usage: npm run ops -- <${opsCommands.join("|")}> --aws [--stack FieldOperations]`;
function fail(message: string): never {
  process.stderr.write(`npm run ops: ${message}\n${usage}\n`);
  process.exit(2);
}
let parsed: { values: { aws?: boolean; stack?: string; help?: boolean }; positionals: string[] };
try {
  parsed = parseArgs({
    options: { aws: { type: "boolean", default: false }, stack: { type: "string" }, help: { type: "boolean", short: "h", default: false } },
    allowPositionals: true,
  });
} catch (error) {
  fail((error as Error).message);
}
if (parsed.values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const command = parsed.positionals[0];
if (!command || !(opsCommands as readonly string[]).includes(command)) fail(`unknown command ${String(command)}`);
if (!parsed.values.aws) fail("acts on a deployed stack: pass --aws (locally, stop npm start instead)");

const cloudFormation = new CloudFormationClient({});
const events = new EventBridgeClient({});
const lambda = new LambdaClient({});
const aws: OpsAws = {
  stackOutputs: async (stackName) => {
    const stack = (await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
    return Object.fromEntries((stack?.Outputs ?? []).map((output) => [output.OutputKey ?? "", output.OutputValue ?? ""]));
  },
  setRuleEnabled: async (ruleName, enabled) => {
    await events.send(enabled ? new EnableRuleCommand({ Name: ruleName }) : new DisableRuleCommand({ Name: ruleName }));
  },
  mappingsOf: async (queueArn) =>
    ((await lambda.send(new ListEventSourceMappingsCommand({ EventSourceArn: queueArn }))).EventSourceMappings ?? []).map((mapping) => ({
      uuid: mapping.UUID ?? "",
      state: mapping.State ?? "unknown",
    })),
  setMappingEnabled: async (uuid, enabled) => {
    await lambda.send(new UpdateEventSourceMappingCommand({ UUID: uuid, Enabled: enabled }));
  },
};
const lines = await runOps(command as OpsCommand, { stackName: parsed.values.stack ?? process.env.STACK_NAME ?? "FieldOperations" }, aws);
process.stdout.write(`${lines.join("\n")}\n`);
