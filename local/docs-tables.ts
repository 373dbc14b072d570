import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { routes } from "#functions/routes";
import { repositoryRoot } from "#infra/repository-root";
import { defaultPlanName, type Plan, plans } from "#shared/domain/tenants/plans";
import { importLimitsOf } from "#shared/domain/usage/import-quota";
import type { RouteDefinition } from "#shared/http/route";

/**
 * `npm run docs:tables [-- --check]`: the docs' tables that restate code are written from the code,
 * between `<!-- generated:<name> begin -->` and `<!-- generated:<name> end -->` markers, so they
 * cannot drift. `--check` writes nothing and exits 1 when a committed table differs (the unit test
 * test/unit/platform/docs-tables.test.ts does the same check).
 */
export interface GeneratedTable {
  /** Path from the repository root. */
  file: string;
  name: string;
  render: () => string;
}

const verbs = ["view", "add", "edit", "delete"] as const;

/** One row per permission module, one column per verb, each cell the routes that require that slug. */
export function routesTable(table: readonly RouteDefinition[] = routes): string {
  const modules = new Map<string, Map<string, string[]>>();
  const publicRoutes: string[] = [];
  for (const route of table) {
    const name = `\`${route.method} ${route.path}\``;
    if (!route.permission) {
      publicRoutes.push(name);
      continue;
    }
    const [verb = "", module = ""] = route.permission.split("/");
    if (!(verbs as readonly string[]).includes(verb))
      throw new Error(`${route.operationId}: permission verb "${verb}" is not one of ${verbs.join(", ")}`);
    const cells = modules.get(module) ?? new Map<string, string[]>();
    modules.set(module, cells);
    cells.set(verb, [...(cells.get(verb) ?? []), name]);
  }
  const rows = [...modules].map(
    ([module, cells]) => `| \`${module}\` | ${verbs.map((verb) => cells.get(verb)?.join(", ") ?? "—").join(" | ")} |`,
  );
  return [
    "| module | `view/…` | `add/…` | `edit/…` | `delete/…` |",
    "|---|---|---|---|---|",
    ...rows,
    `| no token, no permission | ${publicRoutes.join(", ")} | | | |`,
  ].join("\n");
}

const count = (value: number) => value.toLocaleString("en-US");
/** Bytes in the largest binary unit that divides them (10 MiB, 5 GiB). */
const bytes = (value: number) => {
  for (const [unit, size] of [
    ["GiB", 1024 ** 3],
    ["MiB", 1024 ** 2],
    ["KiB", 1024],
  ] as const)
    if (value % size === 0) return `${count(value / size)} ${unit}`;
  return `${count(value)} bytes`;
};

/** The product's plans as the plan config declares them. */
export function plansTable(list: readonly Plan[] = plans, defaultPlan: string = defaultPlanName): string {
  const rows = list.map((plan) =>
    [
      `\`${plan.name}\`${plan.name === defaultPlan ? " (default)" : ""}`,
      `${count(plan.rate)}/s`,
      count(plan.burst),
      plan.callQuota ? `${count(plan.callQuota.limit)} per ${plan.callQuota.period}` : "none",
      plan.runSecondsPerMonth === undefined ? "unlimited" : count(plan.runSecondsPerMonth),
      count(plan.maxRunsQueued),
      plan.importRecordsPerMonth === undefined ? "unlimited" : count(plan.importRecordsPerMonth),
      count(importLimitsOf(plan).maxRunning),
      bytes(importLimitsOf(plan).maxBytes),
      plan.travelElementsPerMonth === undefined ? "unlimited" : count(plan.travelElementsPerMonth),
      plan.positionSamplesPerMonth === undefined ? "unlimited" : count(plan.positionSamplesPerMonth),
      plan.description,
    ].join(" | "),
  );
  return [
    "| plan | rate | burst | call quota | run seconds per month | runs queued at once | imported records per month | imports at once | export size | travel elements per month | position samples per month | |",
    "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ...rows.map((row) => `| ${row} |`),
  ].join("\n");
}

/**
 * The routes of one API area (their handlers under `functions/http/<directory>/`) with the permission
 * slug each needs: the area docs state it from the route table, so it cannot drift.
 */
export function areaPermissionsTable(directories: readonly string[], table: readonly RouteDefinition[] = routes): string {
  const inArea = table.filter((route) => directories.some((directory) => route.handler.startsWith(`functions/http/${directory}/`)));
  if (inArea.length === 0) throw new Error(`no routes under functions/http/{${directories.join(",")}}/`);
  return [
    "| route | permission |",
    "|---|---|",
    ...inArea.map(
      (route) => `| \`${route.method} /v3${route.path}\` | ${route.permission ? `\`${route.permission}\`` : "none (no token)"} |`,
    ),
  ].join("\n");
}

/** Area docs and the handler directories of their routes. */
const areaDocs: ReadonlyArray<[file: string, directories: readonly string[]]> = [
  ["docs/api/data-types.md", ["data-types"]],
  ["docs/api/records.md", ["data"]],
  ["docs/api/hubs-visits-configurations.md", ["hubs", "visits", "routing-configurations"]],
  ["docs/api/routing-runs.md", ["routing-results"]],
  ["docs/api/app-integrations.md", ["app-integrations"]],
];

export const generatedTables: readonly GeneratedTable[] = [
  { file: "docs/api/README.md", name: "routes", render: () => routesTable() },
  { file: "docs/operations.md", name: "plans", render: () => plansTable() },
  ...areaDocs.map(([file, directories]) => ({ file, name: "permissions", render: () => areaPermissionsTable(directories) })),
];

/** `text` with the table called `name` replaced by `table`; throws when the markers are missing. */
export function withTable(text: string, name: string, table: string): string {
  const begin = `<!-- generated:${name} begin -->`;
  const end = `<!-- generated:${name} end -->`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`no ${begin} … ${end} markers`);
  return `${text.slice(0, from + begin.length)}\n${table}\n${text.slice(to)}`;
}

/** Every generated file as committed and as it should be. */
export function generatedFiles(root: string = repositoryRoot): Array<{ file: string; committed: string; generated: string }> {
  const files = new Map<string, { committed: string; generated: string }>();
  for (const { file, name, render } of generatedTables) {
    const entry = files.get(file) ?? { committed: readFileSync(join(root, file), "utf8"), generated: "" };
    entry.generated = withTable(entry.generated || entry.committed, name, render());
    files.set(file, entry);
  }
  return [...files].map(([file, entry]) => ({ file, ...entry }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const { file, committed, generated } of generatedFiles()) {
    if (committed === generated) continue;
    stale++;
    if (check) process.stderr.write(`${file}: generated tables are stale; run npm run docs:tables\n`);
    else {
      writeFileSync(join(repositoryRoot, file), generated);
      process.stdout.write(`${file}: tables written\n`);
    }
  }
  if (check && stale > 0) process.exit(1);
  if (stale === 0) process.stdout.write("docs tables are up to date\n");
}
