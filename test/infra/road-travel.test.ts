import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Match } from "aws-cdk-lib/assertions";
import { afterAll, describe, expect, it } from "vitest";
import { functionActions, functionStatements, productTemplates, synthesize } from "./synthesize.ts";

/**
 * Road-network travel in the stack: the run worker may call Amazon Location's routes matrix only when
 * the operator's `travelProviders` document declares an `amazonLocation` provider; every function gets
 * the document; the travel caches keep no old versions.
 */
const scratch = mkdtempSync(join(tmpdir(), "cdk-travel-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function synthWith(document: unknown) {
  const file = join(scratch, `providers-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(document));
  return synthesize(mkdtempSync(join(scratch, "out-")), { context: { travelProviders: file } });
}

describe("Stack: travel providers", { timeout: 240_000 }, () => {
  it("grants geo-routes:CalculateRouteMatrix to the run worker only, and only with an amazonLocation provider", async () => {
    const withAmazon = synthWith({
      providers: { aws: { kind: "amazonLocation", region: "eu-central-1" }, city: { kind: "osrm", url: "http://10.0.0.5:5000" } },
      cacheTtlDays: 14,
    });
    expect(functionActions(withAmazon, "RoutingRunFunction")).toContain("geo-routes:CalculateRouteMatrix");
    const statement = functionStatements(withAmazon, "RoutingRunFunction").find((each) =>
      [each.Action].flat().includes("geo-routes:CalculateRouteMatrix"),
    );
    expect(JSON.stringify(statement?.Resource)).toContain(":geo-routes:eu-central-1::provider/default");
    // The bounded matrix cache reads, writes and deletes its blocks (shared/travel/matrix-cache.ts).
    const cacheStatement = functionStatements(withAmazon, "RoutingRunFunction").find((each) =>
      JSON.stringify(each.Resource).includes("/travel-cache/*"),
    );
    expect([cacheStatement?.Action].flat().sort()).toEqual(["s3:DeleteObject", "s3:GetObject", "s3:PutObject"]);
    for (const other of ["SchedulerTickFunction", "LegacyImportFunction", "createRoutingConfigurationFunction"]) {
      expect(
        functionActions(withAmazon, other).filter((action) => action.startsWith("geo-routes:")),
        other,
      ).toEqual([]);
    }
    const worker = Object.values(withAmazon.all.findResources("AWS::Lambda::Function")).find((resource) =>
      String(resource.Properties.Description).startsWith("Runs one routing schedule"),
    );
    expect(JSON.parse(worker?.Properties.Environment.Variables.TRAVEL_PROVIDERS_JSON)).toMatchObject({
      providers: { aws: { kind: "amazonLocation" }, city: { kind: "osrm" } },
      cacheTtlDays: 14,
    });
    withAmazon.all.hasResourceProperties("AWS::S3::Bucket", {
      VersioningConfiguration: { Status: "Enabled" },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({
            Prefix: "travel-cache/",
            NoncurrentVersionExpiration: { NoncurrentDays: 1 },
            ExpirationInDays: 14,
            Status: "Enabled",
          }),
        ]),
      },
    });

    const osrmOnly = synthWith({ providers: { city: { kind: "osrm", url: "http://10.0.0.5:5000" } } });
    expect(functionActions(osrmOnly, "RoutingRunFunction").filter((action) => action.startsWith("geo-routes:"))).toEqual([]);
    // The matrix cache is the worker's only with a road-network provider declared.
    expect(JSON.stringify(osrmOnly.all.findResources("AWS::IAM::Policy"))).toContain("/travel-cache/*");
    expect(JSON.stringify((await productTemplates()).all.findResources("AWS::IAM::Policy"))).not.toContain("/travel-cache/*");
  });

  it("fails the synth on a document that is not a travel providers document", () => {
    expect(() => synthWith({ providers: { city: { kind: "osrm" } } })).toThrow(/url/);
  });
});
