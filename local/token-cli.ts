import { join } from "node:path";
import { parseArgs } from "node:util";
import { permissionSlugs } from "#functions/routes";
import { repositoryRoot } from "#local/stack";
import { loadOrCreateSigningKey, mintToken } from "#local/tokens";

/**
 * `npm run --silent token -- --org <orgId> --user <userId> [--hubs h1,h2] [--permissions all|slug,slug]
 *  [--hide <dataTypeId>:<field>,<field>] [--expires-in <seconds>]`
 * Prints one signed JWT and nothing else on stdout. `--permissions` defaults to `all`, which
 * expands to every permission slug the route table requires. `--hide` may be repeated.
 */
const usage = [
  "usage: npm run --silent token -- --org <orgId> --user <userId> [--hubs h1,h2] [--permissions all|slug,slug] [--hide <dataTypeId>:<field>,<field>] [--expires-in <seconds>]",
  `--permissions is \`all\` (the default) or a comma-separated list of these slugs: ${permissionSlugs.join(", ")}`,
].join("\n");

function parseCommandLine() {
  try {
    return parseArgs({
      options: {
        help: { type: "boolean", short: "h" },
        org: { type: "string" },
        user: { type: "string" },
        hubs: { type: "string" },
        permissions: { type: "string", default: "all" },
        hide: { type: "string", multiple: true },
        "expires-in": { type: "string" },
      },
      allowPositionals: false,
    }).values;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    process.exit(2);
  }
}

const values = parseCommandLine();
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
if (!values.org || !values.user) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}

const list = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

const permissionDetails = (values.hide ?? []).map((entry) => {
  const separator = entry.indexOf(":");
  if (separator <= 0) {
    process.stderr.write(`--hide expects <dataTypeId>:<field>,<field>, got "${entry}"\n`);
    process.exit(2);
  }
  return { permissionName: "view/data", dataTypeId: entry.slice(0, separator), hiddenFields: list(entry.slice(separator + 1)) };
});

const permissions = values.permissions === "all" ? [...permissionSlugs] : list(values.permissions);
const unknownPermissions = permissions.filter((slug) => !permissionSlugs.includes(slug));
if (unknownPermissions.length > 0) {
  process.stderr.write(`unknown permission ${unknownPermissions.join(", ")}; known slugs: ${permissionSlugs.join(", ")}\n`);
  process.exit(2);
}

const key = loadOrCreateSigningKey(join(repositoryRoot, ".local", "jwt"));
const token = mintToken(
  key,
  {
    sub: values.user,
    organizationId: values.org,
    hubIds: list(values.hubs),
    permissions,
    permissionDetails,
  },
  { expiresInSeconds: values["expires-in"] ? Number(values["expires-in"]) : undefined },
);
process.stdout.write(`${token}\n`);
