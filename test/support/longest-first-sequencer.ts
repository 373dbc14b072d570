import { readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Starts the longest test files first, across projects, so no long file starts last and runs alone
 * while the other workers idle (a file that starts last sets the suite's wall time). Vitest's own
 * order runs the projects one after another and, from a clean clone (no results cache), larger files
 * first: the fuzz files are four lines long and would start last.
 *
 * A file's expected duration is, in order: this checkout's results cache (Vitest's own record of
 * the last run of that file), the table in test/support/file-durations.json (seconds per file,
 * written from a full run by `npm run test:durations`), or a guess by project and size for a file
 * neither has seen. Only the order depends on these figures; which files run, and how, does not.
 */
export const durationsFile = "test/support/file-durations.json";

/** A file neither the cache nor the table knows: unit files take about a second, the others ~8 s. */
const GUESS_SECONDS = { unit: 1, other: 8 } as const;

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    let table: Record<string, number> = {};
    try {
      table = JSON.parse(readFileSync(join(root, durationsFile), "utf8")).seconds ?? {};
    } catch {
      // no table: the cache and the guess still order the files
    }
    const expected = new Map<TestSpecification, number>();
    for (const file of files) {
      const path = relative(root, file.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${file.project.name}:${path}`)?.duration;
      let seconds = cached !== undefined ? cached / 1000 : table[path];
      if (seconds === undefined) {
        const guess = file.project.name.startsWith("unit") ? GUESS_SECONDS.unit : GUESS_SECONDS.other;
        // Among unknown files of a kind, the larger one first (a tie-break, as Vitest's own order).
        seconds = guess + statSync(file.moduleId).size / 1e7;
      }
      expected.set(file, seconds);
    }
    return [...files].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        (expected.get(b) ?? 0) - (expected.get(a) ?? 0) ||
        a.moduleId.localeCompare(b.moduleId),
    );
  }
}
