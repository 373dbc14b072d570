import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TestSpecification, Vitest } from "vitest/node";
import { repositoryRoot } from "#infra/repository-root";
import LongestFirstSequencer, { durationsFile } from "#test/support/longest-first-sequencer";

/** A specification as the sequencer sees it: a real file (its size is read), its project and group. */
function spec(path: string, project: string, groupOrder = 0): TestSpecification {
  return { moduleId: `${repositoryRoot}/${path}`, project: { name: project, config: { sequence: { groupOrder } } } } as TestSpecification;
}

function sequencer(cachedMs: Record<string, number> = {}): LongestFirstSequencer {
  const ctx = {
    config: { root: repositoryRoot, shard: undefined },
    cache: {
      getFileTestResults: (key: string) => (key in cachedMs ? { duration: cachedMs[key], failed: false } : undefined),
    },
  };
  return new LongestFirstSequencer(ctx as unknown as Vitest);
}

const order = async (files: TestSpecification[], cachedMs?: Record<string, number>) =>
  (await sequencer(cachedMs).sort(files)).map((file) => file.moduleId.slice(repositoryRoot.length + 1));

/** The durations table as committed (seconds per file). */
const tableSeconds = () =>
  (JSON.parse(readFileSync(join(repositoryRoot, durationsFile), "utf8")) as { seconds: Record<string, number> }).seconds;

describe("Longest-first test order (test/support/longest-first-sequencer.ts)", () => {
  it("starts the files the durations table names longest first, across projects, whatever their size", async () => {
    // The fuzz files are a few lines long: by size (Vitest's clean-clone order) they would start last.
    const paths = [
      "test/unit/platform/keys.test.ts",
      "test/http/hubs.test.ts",
      "test/http/route-fuzz-strict.strict.test.ts",
      "test/http/route-fuzz-2.test.ts",
    ];
    const projects = ["unit", "integration", "strict", "integration"];
    const files = paths.map((path, i) => spec(path, projects[i] as string));
    // The table is regenerated from full runs (npm run test:durations): the expected order is the table's.
    const durations = { seconds: tableSeconds() };
    const byTable = [...paths].sort((a, b) => (durations.seconds[b] ?? 0) - (durations.seconds[a] ?? 0));
    const bySize = [...paths].sort((a, b) => statSync(join(repositoryRoot, b)).size - statSync(join(repositoryRoot, a)).size);
    expect(byTable).not.toEqual(bySize); // else this would not tell the two orders apart
    expect(await order(files)).toEqual(byTable);
  });

  it("prefers this checkout's results cache to the table", async () => {
    const files = [spec("test/http/route-fuzz-2.test.ts", "integration"), spec("test/http/hubs.test.ts", "integration")];
    // A cached run longer than either file's table entry puts that file first, whichever it is.
    const table = tableSeconds();
    const longer = (Math.max(table["test/http/route-fuzz-2.test.ts"] ?? 0, table["test/http/hubs.test.ts"] ?? 0) + 60) * 1000;
    expect(await order(files, { "integration:test/http/hubs.test.ts": longer })).toEqual([
      "test/http/hubs.test.ts",
      "test/http/route-fuzz-2.test.ts",
    ]);
    expect(await order(files, { "integration:test/http/route-fuzz-2.test.ts": longer })).toEqual([
      "test/http/route-fuzz-2.test.ts",
      "test/http/hubs.test.ts",
    ]);
  });

  it("guesses for a file neither knows: an integration file before a unit file, then the larger first", async () => {
    const files = [
      spec("test/unit/platform/keys.test.ts", "unit"),
      spec("test/unit/platform/cursor.test.ts", "unit"),
      spec("test/support/shifts.ts", "integration"),
    ];
    const sorted = await order(files);
    expect(sorted[0]).toBe("test/support/shifts.ts");
    const { statSync } = await import("node:fs");
    const size = (path: string) => statSync(`${repositoryRoot}/${path}`).size;
    expect(size(sorted[1] as string)).toBeGreaterThanOrEqual(size(sorted[2] as string));
  });

  it("keeps groups (sequence.groupOrder) before duration", async () => {
    const files = [spec("test/http/route-fuzz-2.test.ts", "integration", 1), spec("test/unit/platform/keys.test.ts", "unit", 0)];
    expect(await order(files)).toEqual(["test/unit/platform/keys.test.ts", "test/http/route-fuzz-2.test.ts"]);
  });
});
