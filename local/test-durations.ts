/**
 * `npm run test:durations`: after a full `npm test`, writes each test file's duration from Vitest's
 * results cache into test/support/file-durations.json, which the longest-first sequencer
 * (test/support/longest-first-sequencer.ts) reads where a checkout has no cache of its own (a clean
 * clone, CI). Files the cache does not know keep their figure; files that no longer exist are dropped.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { durationsFile } from "#test/support/longest-first-sequencer";

const root = resolve(import.meta.dirname, "..");
const cacheRoot = join(root, "node_modules/.vite/vitest");

const measured = new Map<string, number>();
if (existsSync(cacheRoot)) {
  for (const directory of readdirSync(cacheRoot)) {
    const path = join(cacheRoot, directory, "results.json");
    if (!existsSync(path)) continue;
    const { results } = JSON.parse(readFileSync(path, "utf8")) as { results: Array<[string, { duration?: number }]> };
    for (const [key, { duration }] of results) {
      const file = key.slice(key.indexOf(":") + 1);
      if (duration !== undefined) measured.set(file, Math.round(duration / 100) / 10);
    }
  }
}
if (measured.size === 0) {
  process.stderr.write(`no Vitest results cache under ${cacheRoot}: run \`npm test\` first\n`);
  process.exit(1);
}
const target = join(root, durationsFile);
const previous: Record<string, number> = existsSync(target) ? (JSON.parse(readFileSync(target, "utf8")).seconds ?? {}) : {};
const merged = { ...previous, ...Object.fromEntries(measured) };
const seconds = Object.fromEntries(
  Object.entries(merged)
    .filter(([file]) => existsSync(join(root, file)))
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b)),
);
writeFileSync(
  target,
  `${JSON.stringify({ note: "Seconds per test file from a full run (npm run test:durations); only the order of files depends on it.", seconds }, null, 2)}\n`,
);
process.stdout.write(`${durationsFile}: ${Object.keys(seconds).length} files (${measured.size} from this checkout's last runs)\n`);
