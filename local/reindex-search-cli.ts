import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { repositoryRoot } from "#infra/repository-root";
import { findRuntime } from "#local/runtime-files";
import { resetAppConfig } from "#shared/config/env";

/**
 * `npm run reindex-search -- [--org <id>] [--aws]`: the backfill of the search token layout
 * (docs/operations.md, "Search token layout"). Writes this layout's token items for every record
 * written before it, organization by organization (every enrolled tenant, or `--org`), and prints
 * the counts. Locally it acts on the running `npm start`; with `--aws` on TABLE_NAME.
 */
const { values } = parseArgs({
  options: { org: { type: "string" }, aws: { type: "boolean", default: false }, port: { type: "string" } },
});
function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}
if (values.aws) {
  if (!process.env.TABLE_NAME) fail("--aws needs TABLE_NAME (the stack's TableName output)");
} else {
  const file = process.env.FIELD_OPS_RUNTIME_FILE;
  if (file && !existsSync(file)) fail(`no local runtime: ${file} (FIELD_OPS_RUNTIME_FILE) is missing`);
  const environment = file
    ? (JSON.parse(readFileSync(file, "utf8")) as { environment: Record<string, string> }).environment
    : findRuntime(join(repositoryRoot, ".local"), values.port === undefined ? undefined : Number(values.port)).environment;
  Object.assign(process.env, environment);
}
resetAppConfig();
const { reindexOrganization } = await import("#shared/store/record-store");
const { listTenants } = await import("#shared/store/tenant-store");
const organizations = values.org ? [values.org] : (await listTenants()).map((tenant) => tenant.organizationId);
let failed = 0;
for (const organizationId of organizations) {
  const totals = await reindexOrganization(organizationId);
  failed += totals.failed;
  process.stdout.write(`${organizationId}: ${totals.records} records read, ${totals.reindexed} re-indexed, ${totals.failed} failed\n`);
}
if (failed > 0) process.stdout.write(`${failed} records failed (throttled?): run it again.\n`);
process.exit(failed > 0 ? 1 : 0);
