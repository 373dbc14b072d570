import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { routes } from "#functions/routes";

/**
 * What the API pages say about permissions agrees with the route table: a line naming one route
 * (`METHOD /v3/path`) and a permission slug names that route's slug; a page that says its routes
 * need no permission slug covers routes that need none. (The generated tables are checked by the
 * docs-tables test; this covers the prose around them.)
 */
const pagesDirectory = "docs/api";
const pages = readdirSync(pagesDirectory)
  .filter((name) => name.endsWith(".md"))
  .map((name) => ({ name, text: readFileSync(join(pagesDirectory, name), "utf8") }));

const routeMention = /\b(GET|POST|PUT|PATCH|DELETE)\s+`?\/v3(\/[\w{}/.-]*)/g;
const normalized = (path: string) => path.replace(/\/+$/, "") || "/";
const routeAt = (method: string, path: string) =>
  routes.find((route) => route.method === method && normalized(route.path) === normalized(path));

describe("Docs: the permission sentences of docs/api agree with the route table", () => {
  it("reads every page", () => {
    expect(pages.length).toBeGreaterThan(5);
  });

  it.each(pages)("$name: a line naming one route and a permission names that route's slug", ({ text }) => {
    for (const line of text.split("\n")) {
      if (!/permission/i.test(line)) continue;
      const mentioned = [...line.matchAll(routeMention)].map((match) => routeAt(match[1] as string, match[2] as string));
      const known = mentioned.filter((route) => route !== undefined);
      if (known.length !== 1 || mentioned.length !== 1) continue;
      const slugs = [...line.matchAll(/`((?:view|add|edit|delete)\/[\w-]+)`/g)].map((match) => match[1]);
      if (slugs.length === 0) continue;
      expect(slugs, line).toEqual(slugs.map(() => known[0]?.permission));
    }
  });

  it.each(pages)("$name: says 'no permission' only of routes that need none", ({ name, text }) => {
    const sayings = text.split("\n").filter((line) => /no permission slug|need no permission|needs no permission/i.test(line));
    if (sayings.length === 0) return;
    const area = name.replace(/\.md$/, "");
    const areaRoutes = routes.filter((route) => route.handler.includes(`/${area}/`));
    expect(
      areaRoutes.filter((route) => route.permission).map((route) => `${route.method} ${route.path}`),
      sayings.join("\n"),
    ).toEqual([]);
  });
});
