import { randomUUID } from "node:crypto";
import type { SQSEvent } from "aws-lambda";
import { permissionSlugs, routes } from "#functions/routes";
import { mintToken, type SigningKey } from "#local/tokens";
import { bucketName, s3Client } from "#shared/blob/s3";
import { appConfig } from "#shared/config/env";
import { sqsClient } from "#shared/queue/sqs";
import { FixtureSet } from "./fixtures.ts";
import { type FuzzSummary, runFuzz } from "./route-fuzzer.ts";
import { StoreOracle } from "./store-oracle.ts";

/**
 * Everything around one fuzz run, shared by test/http/route-fuzz-*.test.ts and `npm run fuzz`: a
 * fuzz organization and a bystander organization (tokens with every permission slug), one fixture
 * of each resource in both, the store oracle, then the fuzzer. The process environment must point
 * at the emulators and at a table, bucket and queue that only this run writes (TABLE_NAME,
 * BUCKET_NAME, RUN_QUEUE_URL); the gateway at `baseUrl` must use the same ones.
 */
export interface FuzzRunOptions {
  baseUrl: string;
  signingKey: SigningKey;
  seed: number;
  runs: number;
  /** operationIds to fuzz; all routes when empty. */
  only?: readonly string[];
  onProgress?: (done: number, total: number) => void;
}

export async function fuzzRouteTable(options: FuzzRunOptions): Promise<FuzzSummary> {
  const organizationId = `fuzz-${randomUUID()}`;
  const bystanderOrganizationId = `bystander-${randomUUID()}`;
  const tokenOf = (organization: string) =>
    mintToken(options.signingKey, { sub: "fuzzer", organizationId: organization, permissions: [...permissionSlugs] });
  const { handler: runWorker } = (await import("#functions/jobs/routing-run")) as { handler: (event: SQSEvent) => Promise<unknown> };
  const fixtureOptions = (token: string) => ({
    baseUrl: options.baseUrl,
    token,
    sqs: sqsClient(),
    queueUrl: appConfig().RUN_QUEUE_URL,
    runWorker,
  });
  const token = tokenOf(organizationId);
  const fixtures = new FixtureSet(fixtureOptions(token));
  const foreignFixtures = new FixtureSet(fixtureOptions(tokenOf(bystanderOrganizationId)));
  await fixtures.create();
  await foreignFixtures.create();
  const oracle = new StoreOracle({
    tableName: appConfig().TABLE_NAME,
    bucketName: bucketName(),
    queueUrl: appConfig().RUN_QUEUE_URL,
    organizationIds: [organizationId, bystanderOrganizationId],
    s3: s3Client(),
    sqs: sqsClient(),
  });
  const selected = options.only?.length ? routes.filter((route) => options.only?.includes(route.operationId)) : routes;
  if (selected.length === 0) throw new Error(`no route named ${options.only?.join(", ")}`);
  try {
    return await runFuzz({
      baseUrl: options.baseUrl,
      routes: selected,
      token,
      fixtures,
      foreignFixtures,
      oracle,
      organizationId,
      bystanderOrganizationId,
      seed: options.seed,
      runs: options.runs,
      onProgress: options.onProgress,
    });
  } finally {
    oracle.destroy();
  }
}
