import type { RouteAnswer } from "#local/gateway";
import { declaredFailures } from "#shared/http/openapi";
import type { RouteDefinition } from "#shared/http/route";

/**
 * The answers the HTTP suites observe, checked against the route table. The local gateway runs in
 * the globalSetup process and tells this log of every answer a route gives (local/gateway.ts,
 * `observe`), whichever test worker sent the request — so parallel workers need no shared file, and
 * requests sent with plain `fetch` count too. After the suites, the globalSetup teardown fails the
 * run on any (route, status, failedCode) the route table does not declare: a success status must be
 * one of the route's `responses`, an error's failedCode one of `declaredFailures(route)` for its status.
 */
export class RouteAnswerLog {
  private readonly seen = new Map<string, RouteAnswer>();

  record(answer: RouteAnswer): void {
    this.seen.set(`${answer.operationId} ${answer.status} ${answer.failedCode ?? ""}`, answer);
  }

  get size(): number {
    return this.seen.size;
  }

  /** The observed answers the route table does not declare, one line each. */
  undeclared(routes: readonly RouteDefinition[]): string[] {
    const byOperation = new Map(routes.map((route) => [route.operationId, route]));
    const problems: string[] = [];
    for (const answer of this.seen.values()) {
      const route = byOperation.get(answer.operationId);
      if (!route) {
        problems.push(`${answer.operationId}: not in the route table`);
        continue;
      }
      const where = `${route.method} ${route.path} (${route.operationId}) answered ${answer.status}`;
      if (answer.status < 400) {
        if (!(answer.status in route.responses())) problems.push(`${where}, a status its responses do not declare`);
        continue;
      }
      const codes = declaredFailures(route).get(answer.status);
      if (!codes) problems.push(`${where} ${answer.failedCode ?? "(no failedCode)"}, a status it does not declare`);
      else if (answer.failedCode === undefined || !codes.has(answer.failedCode)) {
        problems.push(`${where} with failedCode ${answer.failedCode ?? "(none)"}, not among its declared ${[...codes].sort().join(", ")}`);
      }
    }
    return problems.sort();
  }
}
