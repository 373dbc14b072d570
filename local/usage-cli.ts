import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startDynamoDbLocal, type RunningEmulator } from "#local/emulators";
import { allTenantsUsage, formatTenantUsageCsv, formatUsageTable, operatorUsageReport } from "#local/operator-usage";
import { repositoryRoot } from "#local/stack";
import { resetAppConfig } from "#shared/config/env";
import { usageQuerySchema } from "#shared/domain/usage/schema";

/**
 * `npm run usage -- --org <id> --from YYYY-MM-DD --to YYYY-MM-DD [--json] [--aws]`: an organization's
 * calls and routing runs per UTC day, with totals, for billing. `--all` instead of `--org`: one line
 * per enrolled tenant with its totals (`--format csv|json`), the invoicing export.
 *
 * - Locally (default): the local store of `npm start` — the local gateway's call counters and the run
 *   usage items. The store is reached at AWS_ENDPOINT_URL_DYNAMODB when set, else the state npm start
 *   keeps under .local/dynamodb is opened with a DynamoDB Local of the command's own.
 * - `--aws` (a deployed account; the usual AWS credentials and region): calls from the API Gateway
 *   usage plan of the tenant's API key (GetUsage), runs from the table TABLE_NAME (or `--table`).
 */
const usage = [
  "usage: npm run usage -- --org <orgId> --from YYYY-MM-DD --to YYYY-MM-DD [--json] [--aws [--table <name>]]",
  "       npm run usage -- --all --from YYYY-MM-DD --to YYYY-MM-DD [--format csv|json] [--aws [--table <name>]]",
  "  --json   print the report as JSON instead of a table",
  "  --all    every enrolled tenant, one line each with its totals (CSV by default, or --format json)",
  "  --aws    read a deployed stack: calls from the API Gateway usage plan, runs from the table (TABLE_NAME or --table)",
].join("\n");

function fail(message: string): never {
  process.stderr.write(`npm run usage: ${message}\n${usage}\n`);
  process.exit(2);
}

let values: {
  org?: string;
  all?: boolean;
  format?: string;
  from?: string;
  to?: string;
  json?: boolean;
  aws?: boolean;
  table?: string;
  help?: boolean;
};
try {
  ({ values } = parseArgs({
    options: {
      org: { type: "string" },
      all: { type: "boolean", default: false },
      format: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      json: { type: "boolean", default: false },
      aws: { type: "boolean", default: false },
      table: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: false,
  }));
} catch (error) {
  fail((error as Error).message);
}
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
if (!values.org === !values.all) fail("give either --org <id> or --all");
const format = values.format ?? (values.json ? "json" : values.all ? "csv" : "table");
if (!(values.all ? ["csv", "json"] : ["table", "json"]).includes(format))
  fail(`--format ${format} is not one of csv, json (--all) or table, json`);
const query = usageQuerySchema.safeParse({ from: values.from, to: values.to });
if (!query.success) fail(query.error.issues.map((issue) => `--${issue.path.join(".")} ${issue.message}`).join("; "));

let ownStore: RunningEmulator | undefined;
if (values.table) process.env.TABLE_NAME = values.table;
if (!values.aws && !process.env.AWS_ENDPOINT_URL_DYNAMODB) {
  const state = join(repositoryRoot, ".local", "dynamodb");
  if (!existsSync(state)) fail(`no local state under ${state}: run npm start first (or set AWS_ENDPOINT_URL_DYNAMODB)`);
  ownStore = await startDynamoDbLocal(state);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: ownStore.endpoint,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
  });
}
resetAppConfig();

try {
  const source = values.aws ? "usage-plan" : "local-gateway";
  if (values.all) {
    const lines = await allTenantsUsage(query.data, source);
    const exported = { from: query.data.from, to: query.data.to, callsSource: source, tenants: lines };
    process.stdout.write(format === "json" ? `${JSON.stringify(exported, null, 2)}\n` : formatTenantUsageCsv(lines));
  } else {
    const report = await operatorUsageReport(values.org as string, query.data, source);
    process.stdout.write(format === "json" ? `${JSON.stringify(report, null, 2)}\n` : formatUsageTable(report));
  }
} catch (error) {
  process.stderr.write(`npm run usage: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await ownStore?.stop();
}
