import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { repositoryRoot } from "#infra/repository-root";
import { offboardOrganization } from "#local/offboard";
import { findRuntime } from "#local/runtime-files";
import { changeTenantPlan, enrollTenant, listTenants, retirePlan, setTenantStatus, type TenantOperations } from "#shared/app/tenants";
import { resetAppConfig } from "#shared/config/env";
import { configuredPlans } from "#shared/config/tenant-plans";
import { AppError } from "#shared/domain/errors";
import type { Tenant } from "#shared/domain/tenants/plans";
import { apiGatewayKeys } from "#shared/tenancy/api-gateway-keys";
import { localApiKeys } from "#shared/tenancy/local-api-keys";

/**
 * `npm run tenant -- <create|set-plan|suspend|resume|list> …`: the operator's tenant lifecycle.
 * Locally (default) it writes to the store of the running `npm start` (found through its runtime
 * file, .local/runtime/<port>.json); with `--aws` it uses the default AWS credentials, creates and attaches the
 * tenant's API key in API Gateway and writes the table TABLE_NAME of the stack STACK_NAME.
 */
const usage = [
  "usage: npm run tenant -- create   --org <id> [--plan <name>]   enroll an organization (default plan if none)",
  "       npm run tenant -- set-plan --org <id> --plan <name>     move it to another plan (its own plan: repair the key's association)",
  "       npm run tenant -- retire-plan <name> [--to <plan>]      move every tenant on a plan (default: to the default plan),",
  "                                                               before or after removing it from the plans file",
  "       npm run tenant -- suspend  --org <id>                   refuse its calls (403 tenant-403-suspended)",
  "       npm run tenant -- offboard --org <id> [--dry-run] [--export <file>]",
  "                                                               disable its key, export its usage, erase its data",
  "       npm run tenant -- resume   --org <id>",
  "       npm run tenant -- list [--json]",
  "",
  "  --aws   act on the deployed stack (env TABLE_NAME, STACK_NAME=FieldOperations, AWS credentials and region)",
  "          instead of the local runtime started by `npm start`",
  "  --port  the local runtime on this port, when several `npm start` run from this checkout",
  "  Plans: the product's (shared/domain/tenants/plans.ts) plus TENANT_PLANS_FILE, as the stack and `npm start` read them.",
].join("\n");

function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

let parsed: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    options: {
      org: { type: "string" },
      plan: { type: "string" },
      to: { type: "string" },
      "dry-run": { type: "boolean", default: false },
      export: { type: "string" },
      aws: { type: "boolean", default: false },
      port: { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: true,
  });
}
try {
  parsed = parse();
} catch (error) {
  fail(`${(error as Error).message}\n${usage}`);
}
const { values, positionals } = parsed;
const command = positionals[0];
if (values.help || !command) {
  process.stdout.write(`${usage}\n`);
  process.exit(values.help ? 0 : 2);
}

/**
 * The running `npm start` whose store to use: its runtime file (local/runtime-files.ts), the one on
 * --port when several run; FIELD_OPS_RUNTIME_FILE names a file directly.
 */
function localRuntimeEnvironment(): Record<string, string> {
  const file = process.env.FIELD_OPS_RUNTIME_FILE;
  if (file) {
    if (!existsSync(file)) fail(`no local runtime: ${file} (FIELD_OPS_RUNTIME_FILE) is missing`, 1);
    return (JSON.parse(readFileSync(file, "utf8")) as { environment: Record<string, string> }).environment;
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !Number.isInteger(port)) fail(`--port must be a port number, not ${values.port}`);
  try {
    return findRuntime(join(repositoryRoot, ".local"), port).environment;
  } catch (error) {
    return fail((error as Error).message, 1);
  }
}

if (values.aws) {
  if (!process.env.TABLE_NAME) fail("--aws needs TABLE_NAME (the stack's TableName output)");
} else {
  Object.assign(process.env, localRuntimeEnvironment());
}
resetAppConfig();
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

const operations: TenantOperations = {
  plans: configuredPlans(),
  apiKeys: values.aws ? apiGatewayKeys(process.env.STACK_NAME ?? "FieldOperations") : localApiKeys,
};

const organization = () => values.org ?? fail(`${command} needs --org <id>\n${usage}`);
const line = (tenant: Tenant) => `${tenant.organizationId}\t${tenant.plan}\t${tenant.status}\t${tenant.updatedTime}`;

try {
  switch (command) {
    case "create":
      process.stdout.write(`enrolled\t${line(await enrollTenant(organization(), values.plan, operations))}\n`);
      break;
    case "set-plan":
      process.stdout.write(
        `${line(await changeTenantPlan(organization(), values.plan ?? fail(`set-plan needs --plan <name>\n${usage}`), operations))}\n`,
      );
      break;
    case "retire-plan": {
      const from = positionals[1] ?? fail(`retire-plan needs the plan's name\n${usage}`);
      const moved = await retirePlan(from, values.to, operations);
      process.stdout.write(`${moved.map((tenant) => `moved\t${line(tenant)}\n`).join("")}${moved.length} tenant(s) moved off ${from}\n`);
      break;
    }
    case "offboard": {
      const organizationId = organization();
      const dryRun = values["dry-run"];
      const report = await offboardOrganization(organizationId, { dryRun, apiKeys: operations.apiKeys, versions: values.aws });
      const exportFile = values.export ?? `offboard-${organizationId}.json`;
      if (!dryRun) writeFileSync(exportFile, `${JSON.stringify({ organizationId, usage: report.usage }, null, 2)}\n`);
      const verb = dryRun ? "would erase" : "erased";
      const lines = [
        ...Object.entries(report.items).map(([kind, count]) => `${verb}\t${count}\titems\t${kind}`),
        ...Object.entries(report.objects).map(([prefix, count]) => `${verb}\t${count}\tobjects\t${prefix}`),
        dryRun
          ? "dry run: nothing changed"
          : `usage exported to ${exportFile}; the tenant record is kept, suspended, marked offboardedTime`,
      ];
      process.stdout.write(`${lines.join("\n")}\n`);
      break;
    }
    case "suspend":
      process.stdout.write(`${line(await setTenantStatus(organization(), "suspended", operations))}\n`);
      break;
    case "resume":
      process.stdout.write(`${line(await setTenantStatus(organization(), "active", operations))}\n`);
      break;
    case "list": {
      const tenants = await listTenants();
      if (values.json)
        process.stdout.write(
          `${JSON.stringify(
            tenants.map(({ apiKeyValue: _value, ...tenant }) => tenant),
            null,
            2,
          )}\n`,
        );
      else process.stdout.write(`${["organization\tplan\tstatus\tupdated", ...tenants.map(line)].join("\n")}\n`);
      break;
    }
    default:
      fail(`unknown command ${command}\n${usage}`);
  }
} catch (error) {
  if (error instanceof AppError) {
    const detail = (error.details().errors as Array<{ message: string }> | undefined)?.map((issue) => issue.message).join("; ");
    fail(
      `npm run tenant: ${error.failedCode === "tenant-404" ? `the organization ${values.org} is not enrolled` : (detail ?? error.message)}`,
      1,
    );
  }
  fail(`npm run tenant: ${(error as Error).message}`, 1);
}
