/** REST paths of the route table (`/routing/schedule/{scheduleId}`) as segments and prefixes. */
export function pathSegments(path: string): string[] {
  return path.split("/").filter((segment) => segment.length > 0);
}

export function parentPath(path: string): string {
  const segments = pathSegments(path);
  return segments.length <= 1 ? "/" : `/${segments.slice(0, -1).join("/")}`;
}

/** `/a/b/c` → `/a`, `/a/b`, `/a/b/c`. */
export function pathPrefixes(path: string): string[] {
  const segments = pathSegments(path);
  return segments.map((_, index) => `/${segments.slice(0, index + 1).join("/")}`);
}

export const rootOwner = "root";

/**
 * Which stack creates each path resource of the route table, pinned: a path keeps the owner
 * recorded for it in infra/api-path-owners.json (written by `npm run api:owners`) for as long as
 * that owner still has routes, so adding a route under another area's path never moves an API
 * Gateway resource between stacks (CloudFormation would create the new one before deleting the old,
 * and API Gateway refuses two resources with one path). A path not recorded yet goes to the one
 * area that uses it, or the root stack when several do (sharedPaths).
 */
export function pathOwners(
  routes: ReadonlyArray<{ path: string; area: string }>,
  recorded: Readonly<Record<string, string>>,
): Map<string, string> {
  const areas = new Set(routes.map((route) => route.area));
  const shared = new Set(sharedPaths(routes));
  const owners = new Map<string, string>();
  for (const route of routes) {
    for (const prefix of pathPrefixes(route.path)) {
      if (owners.has(prefix)) continue;
      const pinned = recorded[prefix];
      const stillThere = pinned !== undefined && (pinned === rootOwner || areas.has(pinned));
      owners.set(prefix, stillThere ? pinned : shared.has(prefix) ? rootOwner : route.area);
    }
  }
  return new Map([...owners].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The path resources more than one area uses (e.g. `/routing`, under which schedules,
 * configurations and results live). They belong to the root stack; every other resource belongs to
 * the one area stack whose routes use it, since two stacks cannot both create the same resource.
 */
export function sharedPaths(routes: ReadonlyArray<{ path: string; area: string }>): string[] {
  const areasByPath = new Map<string, Set<string>>();
  for (const route of routes) {
    for (const prefix of pathPrefixes(route.path)) {
      const areas = areasByPath.get(prefix) ?? new Set<string>();
      areas.add(route.area);
      areasByPath.set(prefix, areas);
    }
  }
  return [...areasByPath].filter(([, areas]) => areas.size > 1).map(([path]) => path);
}

/** `functions/http/<area>/<verb>.ts` → `<area>`: the nested stack a route's function and method live in. */
export function apiArea(handler: string): string {
  const match = /^functions\/http\/([^/]+)\//.exec(handler);
  if (!match?.[1]) throw new Error(`Route handler ${handler} is not below functions/http/<area>/`);
  return match[1];
}
