import fc from "fast-check";
import { safeParse } from "zod/mini";
import type { RouteDefinition } from "#shared/http/route";
import { type Answer, send } from "./fuzz-client.ts";
import type { FixtureSet } from "./fixtures.ts";
import { describeBody, describeRequest, type FuzzRequest, materialize, requestArbitrary } from "./requests.ts";
import { type StoreOracle, type StoreSnapshot, storeChanges } from "./store-oracle.ts";

/**
 * The route-table fuzzer: for every route, requests generated from its schemas and the hostile
 * vocabulary go through the local gateway, and each answer is checked:
 *   - never a 5xx;
 *   - errors carry the `{ status: false, message, failedCode }` envelope (400s also `errors`), with
 *     no validation-library text and no internals;
 *   - success bodies carry `status: true`;
 *   - a 4xx stored nothing (table, bucket, run queue), and no request changed the bystander
 *     organization's data.
 * Requests of one route come from one seed derived from (seed, operationId), so `--seed S --route
 * opId` replays a route's sequence; routes are interleaved run by run.
 */
export interface FuzzOptions {
  baseUrl: string;
  routes: readonly RouteDefinition[];
  /** Token of the fuzz organization, with every permission. */
  token: string;
  fixtures: FixtureSet;
  /** Fixture ids of the bystander organization (`foreign:<name>` in generated requests). */
  foreignFixtures: FixtureSet;
  oracle: StoreOracle;
  organizationId: string;
  bystanderOrganizationId: string;
  seed: number;
  /** Requests in total, spread evenly over the routes (at least one each). */
  runs: number;
  onProgress?: (done: number, total: number) => void;
}

export interface FuzzFailure {
  operationId: string;
  check: string;
  status: number;
  request: string;
  body?: string;
  labels: string[];
  answer: string;
  details?: string[];
  /** Reproduce with `npm run fuzz -- --seed <seed> --route <operationId>` (run index within the route). */
  seed: number;
  runIndex: number;
}

export interface FuzzSummary {
  seed: number;
  requests: number;
  durationMs: number;
  statuses: Record<string, number>;
  byRoute: Record<string, Record<string, number>>;
  failures: FuzzFailure[];
}

/** A stable 32-bit seed per route, so adding a route does not change the others' sequences. */
export function routeSeed(seed: number, operationId: string): number {
  let hash = seed | 0;
  for (const char of operationId) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
  return hash | 0;
}

const RAW_VALIDATION_TEXT =
  /Invalid input|expected \w+, received|Too (big|small)|Invalid option|Unrecognized key|Invalid (string|enum|element|key|union)|received (NaN|undefined|null)/i;
const INTERNALS =
  /\bat [\w.<>]+ \(|node_modules|\.ts:\d+|ValidationException|TransactionCanceled|ConditionalCheckFailed|RangeError|TypeError|SyntaxError|ReferenceError|Maximum call stack/;

function excerpt(answer: Answer): string {
  const text = answer.text.replace(/\s+/g, " ");
  return text.length > 300 ? `${text.slice(0, 297)}…` : text;
}

/** Problems with the answer itself (status and envelope), independent of the store. */
export function answerProblems(route: RouteDefinition, answer: Answer): string[] {
  const problems: string[] = [];
  const body = answer.json as Record<string, unknown> | undefined;
  // A 5xx is the finding; its envelope (often API Gateway's own) is beside the point.
  if (answer.status >= 500) return ["5xx"];
  if (answer.status >= 400) {
    if (!body || typeof body !== "object" || Array.isArray(body)) return [...problems, "error body is not a JSON object"];
    if (body.status !== false) problems.push("error envelope: status is not false");
    if (typeof body.message !== "string" || body.message.length === 0) problems.push("error envelope: no message");
    if (typeof body.failedCode !== "string") problems.push("error envelope: no failedCode");
    if (answer.status === 400) {
      const errors = body.errors;
      if (!Array.isArray(errors) || errors.length === 0) problems.push("400 without an errors list");
      else if (
        !errors.every((error) => typeof error?.field === "string" && typeof error?.message === "string" && error.message.length > 0)
      ) {
        problems.push("400 errors entry without field or message");
      }
    }
    const messages = [
      body.message,
      ...(Array.isArray(body.errors) ? body.errors.map((error: { message?: unknown }) => error?.message) : []),
    ].filter((m) => typeof m === "string") as string[];
    if (messages.some((message) => RAW_VALIDATION_TEXT.test(message))) problems.push("raw validation-library text in an error message");
    if (INTERNALS.test(answer.text)) problems.push("error body names internals");
  } else if (answer.status >= 200 && answer.status < 300) {
    // GET /openapi.json and /docs (no auth) answer the document itself; a route documenting another
    // media type (an SVG map) answers that, and an alternative (GeoJSON on ?format=geojson) must match its schema.
    const documented = route.responses()[answer.status];
    const isAlternative = Object.values(documented?.alternatives ?? {}).some((schema) => safeParse(schema, body).success);
    const isEnvelope = Boolean(body) && typeof body === "object" && body?.status === true;
    if (route.auth !== "none" && !documented?.contentType && !isEnvelope && !isAlternative)
      problems.push("success body without status: true");
  }
  return problems;
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzSummary> {
  const startedAt = Date.now();
  const perRoute = Math.max(1, Math.round(options.runs / options.routes.length));
  const sequences = options.routes.map((route) => ({
    route,
    requests: fc.sample(requestArbitrary(route), { seed: routeSeed(options.seed, route.operationId), numRuns: perRoute }),
  }));
  const resolve = (name: string) =>
    name.startsWith("foreign:") ? options.foreignFixtures.id(name.slice("foreign:".length)) : options.fixtures.id(name);
  const organizations = [options.organizationId, options.bystanderOrganizationId];
  const summary: FuzzSummary = { seed: options.seed, requests: 0, durationMs: 0, statuses: {}, byRoute: {}, failures: [] };
  const total = perRoute * sequences.length;
  let current: StoreSnapshot = await options.oracle.snapshot();

  for (let runIndex = 0; runIndex < perRoute; runIndex++) {
    for (const { route, requests } of sequences) {
      const request = requests[runIndex] as FuzzRequest;
      const answer = await send(options.baseUrl, materialize(request, resolve, options.token));
      summary.requests++;
      summary.statuses[answer.status] = (summary.statuses[answer.status] ?? 0) + 1;
      const routeStatuses = summary.byRoute[route.operationId] ?? {};
      summary.byRoute[route.operationId] = routeStatuses;
      routeStatuses[answer.status] = (routeStatuses[answer.status] ?? 0) + 1;

      const after = await options.oracle.refresh(current, route.grants ?? []);
      const changes = storeChanges(current, after, organizations);
      const failure = (check: string, details?: string[]) =>
        summary.failures.push({
          operationId: route.operationId,
          check,
          status: answer.status,
          request: describeRequest(request),
          body: describeBody(request),
          labels: request.labels,
          answer: excerpt(answer),
          details,
          seed: options.seed,
          runIndex,
        });
      for (const problem of answerProblems(route, answer)) failure(problem);
      if (answer.status >= 400 && answer.status < 500 && changes.length > 0)
        failure("4xx changed stored data", changes.map((change) => change.description).slice(0, 10));
      const bystander = changes.filter((change) => change.organizationId === options.bystanderOrganizationId);
      if (bystander.length > 0) failure("another organization's data changed", bystander.map((change) => change.description).slice(0, 10));
      current = after;

      // A successful write through a fixture's path may have deleted or renamed it: re-read, recreate.
      if (answer.status < 300 && route.method !== "GET") {
        const named = Object.values(request.params).flatMap((value) =>
          value.kind === "fixture" && !value.name.startsWith("foreign:") ? [value.name] : [],
        );
        if (named.length > 0) {
          await options.fixtures.ensure(named);
          current = await options.oracle.snapshot(current);
        }
      }
      options.onProgress?.(summary.requests, total);
    }
  }
  // The copy the checks compared against is kept from the table's stream: with what the last
  // requests wrote (a route without the table grant does not look), it must be the table.
  const drift = await options.oracle.verify(await options.oracle.refresh(current, ["tableWrite"]));
  if (drift.length > 0)
    summary.failures.push({
      operationId: "(store oracle)",
      check: "the stream-kept copy of the table differs from a Scan",
      status: 0,
      request: "-",
      labels: [],
      answer: "-",
      details: drift.slice(0, 10),
      seed: options.seed,
      runIndex: perRoute,
    });
  summary.durationMs = Date.now() - startedAt;
  return summary;
}

/** Failures grouped by route, check and status: one line per distinct failure with a first example. */
export function failureGroups(failures: readonly FuzzFailure[]): Array<{ key: string; count: number; example: FuzzFailure }> {
  const groups = new Map<string, { key: string; count: number; example: FuzzFailure }>();
  for (const failure of failures) {
    const key = `${failure.operationId} ${failure.status} ${failure.check}`;
    const group = groups.get(key);
    if (group) group.count++;
    else groups.set(key, { key, count: 1, example: failure });
  }
  return [...groups.values()];
}

export function formatSummary(summary: FuzzSummary): string {
  const lines = [
    `route fuzzer: seed ${summary.seed}, ${summary.requests} requests over ${Object.keys(summary.byRoute).length} routes in ${(summary.durationMs / 1000).toFixed(1)} s`,
    `statuses: ${Object.entries(summary.statuses)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([status, count]) => `${status}×${count}`)
      .join("  ")}`,
  ];
  const withoutSuccess = Object.entries(summary.byRoute)
    .filter(([, statuses]) => !Object.keys(statuses).some((status) => status.startsWith("2")))
    .map(
      ([operationId, statuses]) =>
        `${operationId} (${Object.entries(statuses)
          .map(([status, count]) => `${status}×${count}`)
          .join(" ")})`,
    );
  if (withoutSuccess.length > 0) lines.push(`routes that never answered 2xx: ${withoutSuccess.join(", ")}`);
  const groups = failureGroups(summary.failures);
  lines.push(groups.length === 0 ? "no failures" : `${summary.failures.length} failures in ${groups.length} groups:`);
  for (const { key, count, example } of groups) {
    lines.push(`- ${key} (×${count})`);
    lines.push(`    request: ${example.request}`);
    if (example.body) lines.push(`    body: ${example.body}`);
    if (example.labels.length) lines.push(`    input: ${example.labels.join("; ")}`);
    lines.push(`    answer: ${example.answer}`);
    for (const detail of example.details ?? []) lines.push(`    ${detail}`);
    lines.push(
      `    replay: npm run fuzz -- --seed ${example.seed} --route ${example.operationId} --runs ${example.runIndex + 1} (the last request; the store may differ from the full run)`,
    );
  }
  return lines.join("\n");
}
