import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "#functions/http/openapi/document";
import { repositoryRoot } from "#infra/repository-root";

const changelog = readFileSync(join(repositoryRoot, "CHANGELOG.md"), "utf8");
const { version } = JSON.parse(readFileSync(join(repositoryRoot, "package.json"), "utf8")) as { version: string };
/** `## 3.1.0 — 2026-11-27` headings, newest first. */
const releases = [...changelog.matchAll(/^## (\d+\.\d+\.\d+) — (\d{4}-\d{2}-\d{2})$/gm)].map(([, number, date]) => ({ number, date }));
const compare = (a: string, b: string) => {
  const [x, y] = [a, b].map((each) => each.split(".").map(Number)) as [number[], number[]];
  return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
};

describe("Releases: package.json's version, the CHANGELOG and the tags tell one story (docs/operations.md, Upgrades and releases)", () => {
  it("every second-level heading is Unreleased or a version with its date, newest first", () => {
    const headings = [...changelog.matchAll(/^## (.+)$/gm)].map(([, text]) => text);
    for (const heading of headings) expect(heading).toMatch(/^(Unreleased|\d+\.\d+\.\d+ — \d{4}-\d{2}-\d{2})$/);
    const numbers = releases.map((release) => release.number!);
    expect([...numbers].sort((a, b) => compare(b, a))).toEqual(numbers);
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  it("package.json names the newest released version (or, before the first release, the base it builds on)", () => {
    if (releases.length === 0) expect(version).toMatch(/^\d+\.0\.0$/);
    else expect(version).toBe(releases[0]!.number);
  });

  it("the OpenAPI document's info.version is the release's version", () => {
    expect(openApiDocument().info.version).toBe(version);
  });
});
