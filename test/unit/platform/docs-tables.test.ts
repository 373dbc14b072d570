import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import * as z from "zod/mini";
import { describe, expect, it } from "vitest";
import { repositoryRoot } from "#infra/repository-root";
import { environmentSchema } from "#shared/config/env";
import { generatedFiles, plansTable, routesTable } from "#local/docs-tables";
import type { RouteDefinition } from "#shared/http/route";

const read = (file: string) => readFileSync(join(repositoryRoot, file), "utf8");

/** Every .ts file of the code (not tests, not docs), concatenated: where a documented variable must be read. */
function codeText(): string {
  const texts: string[] = [];
  const walk = (directory: string) => {
    for (const entry of readdirSync(join(repositoryRoot, directory))) {
      const path = join(directory, entry);
      if (statSync(join(repositoryRoot, path)).isDirectory()) walk(path);
      else if (path.endsWith(".ts")) texts.push(read(path));
    }
  };
  for (const directory of ["shared", "functions", "infra", "local"]) walk(directory);
  return texts.join("\n");
}

describe("Docs tables generated from the code (npm run docs:tables)", () => {
  it("the committed tables are the generated ones (run npm run docs:tables when this fails)", () => {
    for (const { file, committed, generated } of generatedFiles()) expect(committed, file).toBe(generated);
  });

  it("each area doc lists every route of its area with the permission it needs, and none says no permission is needed", () => {
    for (const file of [
      "docs/api/data-types.md",
      "docs/api/records.md",
      "docs/api/hubs-visits-configurations.md",
      "docs/api/routing-runs.md",
    ]) {
      const text = read(file);
      expect(text, file).toContain("<!-- generated:permissions begin -->");
      expect(text, file).not.toMatch(/no permission slugs? (is|are) (needed|required)|names no permissions/i);
    }
    expect(read("docs/api/records.md")).toContain("| `POST /v3/data` | `add/data` |");
  });

  it("the routes table has a row per permission module and a cell per route", () => {
    const route = (method: RouteDefinition["method"], path: string, permission?: string) =>
      ({ method, path, permission }) as RouteDefinition;
    const table = routesTable([
      route("GET", "/things", "view/thing"),
      route("POST", "/thing", "add/thing"),
      route("GET", "/thing/{id}", "view/thing"),
      route("GET", "/docs"),
    ]);
    expect(table.split("\n")).toEqual([
      "| module | `view/…` | `add/…` | `edit/…` | `delete/…` |",
      "|---|---|---|---|---|",
      "| `thing` | `GET /things`, `GET /thing/{id}` | `POST /thing` | — | — |",
      "| no token, no permission | `GET /docs` | | | |",
    ]);
    expect(() => routesTable([route("GET", "/x", "read/thing")])).toThrow(/not one of/);
  });

  it("the plans table shows a missing quota as none and marks the default plan", () => {
    const table = plansTable([{ name: "solo", description: "One.", rate: 1, burst: 2, maxRunsQueued: 1 }], "solo");
    expect(table).toContain("| `solo` (default) | 1/s | 2 | none | unlimited | 1 | unlimited | 1 | 1 GiB | unlimited | unlimited | One. |");
  });
});

describe("The environment variables table of docs/operations.md", () => {
  const rows = read("docs/operations.md")
    .split("\n## Configuration")[1]!
    .split("\n## ")[0]!
    .split("\n")
    .filter((line) => /^\| `[A-Z_]+/.test(line))
    .map((line) => {
      const [names = "", , defaults = ""] = line.slice(1).split(" | ");
      // `AWS_ENDPOINT_URL_DYNAMODB/_S3/_SQS` stands for three names.
      const documented = [...names.matchAll(/`([A-Z0-9_]+)((?:\/_[A-Z0-9]+)*)`/g)].flatMap(([, first = "", rest = ""]) => {
        const base = first.replace(/_[A-Z0-9]+$/, "");
        return [
          first,
          ...rest
            .split("/")
            .filter(Boolean)
            .map((suffix) => `${base}${suffix}`),
        ];
      });
      return { documented, defaults };
    });
  const documented = new Map(rows.flatMap((row) => row.documented.map((name) => [name, row.defaults] as const)));
  const defaults = z.parse(environmentSchema, {}) as Record<string, unknown>;

  it("lists every variable of the config schema (shared/config/env.ts)", () => {
    expect(rows.length).toBeGreaterThan(10);
    const missing = Object.keys(environmentSchema.shape).filter((name) => !documented.has(name));
    expect(missing).toEqual([]);
  });

  it("gives each schema default as the schema has it", () => {
    const wrong = Object.entries(defaults)
      .filter(([, value]) => value !== undefined && value !== "")
      .filter(([name, value]) => !documented.get(name)?.includes(`\`${String(value)}\``))
      .map(([name, value]) => `${name}: schema default ${String(value)}, documented ${documented.get(name)}`);
    expect(wrong).toEqual([]);
  });

  it("lists only variables the code reads", () => {
    const code = codeText();
    expect([...documented.keys()].filter((name) => !code.includes(name))).toEqual([]);
  });
});

describe("Links in the README and docs/", () => {
  it("point at files that exist", () => {
    const files = [
      "README.md",
      "shared/routing/README.md",
      ...readdirSync(join(repositoryRoot, "docs"), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".md"))
        .map((f) => join("docs", f)),
    ];
    const broken: string[] = [];
    for (const file of files) {
      for (const [, target = ""] of read(file).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const path = normalize(join(dirname(file), target));
        try {
          statSync(join(repositoryRoot, path));
        } catch {
          broken.push(`${file} → ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
