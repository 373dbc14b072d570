/**
 * `npm run test:area -- <area> [vitest options]`: the tests of one area of functions/http (its unit,
 * integration and HTTP tests), nothing else. The file set is derived, not listed: an area's domain
 * folders are the shared/domain/<folder>s its handlers import; a test belongs to the area when it
 * sits in test/{unit,integration}/<folder>/, when its test/http file is named after the area or a
 * folder, or when it imports the area's handlers or domain modules. `--list` prints the files only.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");

function filesUnder(directory: string, suffix: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path, suffix));
    else if (entry.name.endsWith(suffix)) found.push(path);
  }
  return found;
}

export function areas(): string[] {
  return readdirSync(join(root, "functions/http"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** The shared/domain folders an area's handlers import. */
export function domainFoldersOf(area: string): string[] {
  const folders = new Set<string>();
  for (const file of filesUnder(join(root, "functions/http", area), ".ts")) {
    for (const match of readFileSync(file, "utf8").matchAll(/#shared\/domain\/([\w-]+)\//g)) folders.add(match[1] as string);
  }
  return [...folders].sort();
}

/** The test files of one area, relative to the repository root, sorted. */
export function areaTestFiles(area: string): string[] {
  const folders = domainFoldersOf(area);
  const names = [area, ...folders];
  const imports = [`#functions/http/${area}/`, ...folders.map((folder) => `#shared/domain/${folder}/`)];
  const selected = filesUnder(join(root, "test"), ".test.ts").filter((file) => {
    const path = relative(root, file);
    const [, kind, folder] = path.split("/");
    if ((kind === "unit" || kind === "integration") && folder && names.includes(folder)) return true;
    const httpName = (name: string) => path.startsWith(`test/http/${name}.`) || path.startsWith(`test/http/${name}-`);
    // `data-types.test.ts` is the data-types area's, not the data area's.
    const longerArea = areas().some((other) => other !== area && other.startsWith(`${area}-`) && httpName(other));
    if (kind === "http" && !longerArea && names.some(httpName)) return true;
    const text = readFileSync(file, "utf8");
    return imports.some((prefix) => text.includes(prefix));
  });
  return selected.map((file) => relative(root, file)).sort();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [area, ...rest] = process.argv.slice(2);
  if (!area || !areas().includes(area)) {
    process.stderr.write(`usage: npm run test:area -- <area> [--list | vitest options]\nareas: ${areas().join(", ")}\n`);
    process.exit(2);
  }
  const files = areaTestFiles(area);
  if (rest.includes("--list")) {
    process.stdout.write(`${files.join("\n")}\n`);
    process.exit(0);
  }
  process.stdout.write(`${area}: ${files.length} test files (domain: ${domainFoldersOf(area).join(", ") || "none"})\n`);
  const vitest = spawnSync("npx", ["vitest", "run", ...files, ...rest], { cwd: root, stdio: "inherit" });
  process.exit(vitest.status ?? 1);
}
