import type { AddressInfo } from "node:net";
import { describe, expect, inject, it } from "vitest";
import { routes } from "#functions/routes";
import { repositoryRoot } from "#infra/repository-root";
import { createGateway } from "#local/gateway";
import { LocalUsagePlans } from "#local/usage-plans";
import { configuredPlans } from "#shared/config/tenant-plans";
import { fuzzRouteTable } from "#test/fuzz/harness";
import { failureGroups, formatSummary } from "#test/fuzz/route-fuzzer";
import { useIsolatedTableAndQueue } from "#test/support/isolated-resources";

/**
 * The route-table fuzzer (test/fuzz/) with a fixed seed, in two files (test/http/route-fuzz-*.test.ts)
 * that each fuzz every other route of the table with half the requests, so two workers share it: every route of functions/routes.ts gets
 * requests generated from its schemas and the hostile vocabulary, and must answer without a 5xx,
 * with the error envelope, and without storing anything on a 4xx (see test/fuzz/route-fuzzer.ts).
 * `npm run fuzz -- --runs N` runs the same property longer, with a random or given seed.
 *
 * The gateway is the local gateway (local/gateway.ts) started in this worker over the suite's
 * emulators but on a table and run queue of this file's own: the oracle scans the table after
 * every write-capable request, and other test files writing at the same time must not look like
 * the fuzzer's writes.
 */
const FUZZ_SEED = 20_261_124;
/** Requests over the whole table (both parts together). */
const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 1_500);

/** A run other than the default one (the strict file: test/http/route-fuzz-strict.strict.test.ts). */
export interface RouteFuzzVariant {
  title: string;
  seed: number;
  /** Requests over the whole table. */
  runs: number;
  /** Share of the routes that must answer a 2xx at least once (default 0.8; a short run reaches fewer). */
  successShare?: number;
  /** Runs after the fuzz tables are made, before the first request (e.g. turning the strict model on). */
  beforeRun?: () => void;
}

/** Part `part` of `parts`: the routes whose index in the table is `part` modulo `parts`, and their share of the requests. */
export function describeRouteFuzz(part: number, parts: number, variant?: RouteFuzzVariant): void {
  const selected = routes.filter((_, index) => index % parts === part);
  const runs = Math.ceil((variant?.runs ?? FUZZ_RUNS) / parts);
  const title = variant ? `route table fuzzer, ${variant.title}` : "route table fuzzer";
  describe(`${title}, part ${part + 1} of ${parts} (${selected.length} routes)`, () => {
    it(`answers ${runs} generated requests without a 5xx, with the error envelope, storing nothing on a 4xx`, async () => {
      await useIsolatedTableAndQueue();
      variant?.beforeRun?.();
      // With the usage plans, as `npm start` and `npm run fuzz` run: every admitted call is counted.
      const gateway = createGateway({
        routes,
        basePath: "/v3",
        rootDirectory: repositoryRoot,
        usagePlans: new LocalUsagePlans(configuredPlans()),
      });
      await new Promise<void>((listening) => gateway.listen(0, "127.0.0.1", listening));
      try {
        const baseUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/v3`;
        const summary = await fuzzRouteTable({
          baseUrl,
          signingKey: inject("signingKey"),
          seed: (variant?.seed ?? FUZZ_SEED) + part,
          runs,
          only: selected.map((route) => route.operationId),
        });
        const report = formatSummary(summary);
        expect(
          failureGroups(summary.failures).map((group) => group.key),
          report,
        ).toEqual([]);
        // The fuzzer must get past validation, not only bounce off it: most routes answer a 2xx at least once.
        const reachedSuccess = Object.values(summary.byRoute).filter((statuses) =>
          Object.keys(statuses).some((status) => status.startsWith("2")),
        );
        expect(reachedSuccess.length, report).toBeGreaterThanOrEqual(Math.ceil(selected.length * (variant?.successShare ?? 0.8)));
      } finally {
        gateway.closeAllConnections();
        await new Promise<void>((closed) => gateway.close(() => closed()));
      }
    }, 600_000);
  });
}
