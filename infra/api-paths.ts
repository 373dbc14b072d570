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
