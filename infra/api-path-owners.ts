import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { routes as productRoutes } from "#functions/routes";
import { apiArea, pathOwners } from "#infra/api-paths";
import { repositoryRoot } from "#infra/repository-root";
import type { RouteDefinition } from "#shared/http/route";

/** The lock file of path-resource owners (like a package lock: written by a command, never by hand). */
export const apiPathOwnersFile = join(repositoryRoot, "infra", "api-path-owners.json");

export function recordedPathOwners(): Record<string, string> {
  try {
    return JSON.parse(readFileSync(apiPathOwnersFile, "utf8")) as Record<string, string>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
}

/** The owners the stack builds with: the recorded ones, plus owners for paths not recorded yet. */
export function currentPathOwners(
  routes: readonly RouteDefinition[] = productRoutes,
  recorded: Readonly<Record<string, string>> = recordedPathOwners(),
): Map<string, string> {
  return pathOwners(
    routes.map((route) => ({ path: route.path, area: apiArea(route.handler) })),
    recorded,
  );
}

/** `npm run api:owners`: records the owner of every path (new paths get theirs; removed paths are dropped). */
export function writePathOwners(): Map<string, string> {
  const owners = currentPathOwners();
  writeFileSync(apiPathOwnersFile, `${JSON.stringify(Object.fromEntries(owners), null, 2)}\n`);
  return owners;
}
