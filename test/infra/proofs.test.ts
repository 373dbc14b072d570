import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { functionActions, functionStatements, productTemplates, synthesize, type SynthesizedTemplates } from "./synthesize.ts";

/** Proof of delivery in the stack (docs/api/execution.md): the proofs' lifecycle rule and each proof function's reach. */
describe("Proofs of delivery in the stack", { timeout: 300_000 }, () => {
  const outdirs: string[] = [];
  const synthesizeIn = (options: Parameters<typeof synthesize>[1] = {}) => {
    const outdir = mkdtempSync(join(tmpdir(), "cdk-proofs-"));
    outdirs.push(outdir);
    return synthesize(outdir, options);
  };
  let base: SynthesizedTemplates;
  beforeAll(async () => {
    base = await productTemplates();
  });
  afterAll(() => {
    for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
  });

  const proofRule = (synthesized: SynthesizedTemplates) => {
    const bucket = Object.values(synthesized.templates[0]!.template.findResources("AWS::S3::Bucket")).find(
      (each) => each.Properties.VersioningConfiguration,
    )!;
    return (bucket.Properties.LifecycleConfiguration.Rules as Array<Record<string, unknown>>).filter((rule) => rule.Prefix === "proofs/");
  };

  it("moves proofs to Standard-IA after 30 days and expires them after proofRetentionDays (default 400)", () => {
    expect(proofRule(base)).toEqual([
      expect.objectContaining({
        Id: "ExpireProofsOfDelivery",
        Status: "Enabled",
        ExpirationInDays: 400,
        Transitions: [{ StorageClass: "STANDARD_IA", TransitionInDays: 30 }],
      }),
    ]);
    expect(proofRule(synthesizeIn({ context: { proofRetentionDays: 90 } }))).toEqual([
      expect.objectContaining({ ExpirationInDays: 90, Transitions: [{ StorageClass: "STANDARD_IA", TransitionInDays: 30 }] }),
    ]);
    // Standard-IA takes objects 30 days old at the earliest: a shorter retention only expires.
    const short = proofRule(synthesizeIn({ context: { proofRetentionDays: 20 } }))[0]!;
    expect(short).toMatchObject({ ExpirationInDays: 20 });
    expect(short.Transitions).toBeUndefined();
    expect(() => synthesizeIn({ context: { proofRetentionDays: 0 } })).toThrow(/proofRetentionDays/);
  });

  const bucketStatements = (functionId: string) =>
    functionStatements(base, functionId).filter((statement) => [statement.Action].flat().some((action) => action.startsWith("s3:")));

  it("lets each proof function reach only proofs/*: the form signs puts, progress heads (with ListBucket under proofs/), the list gets", () => {
    const proofFunctions = routes
      .filter((route) => route.grants?.some((grant) => grant.startsWith("proof")))
      .map((route) => route.operationId);
    expect(proofFunctions.sort()).toEqual(["createVisitProofUpload", "listVisitProofs", "reportVisitProgress"]);
    const onObjects = (functionId: string) =>
      bucketStatements(functionId).filter((statement) => !([statement.Action].flat() as string[]).includes("s3:ListBucket"));
    for (const [operationId, actions] of [
      ["createVisitProofUpload", ["s3:PutObject"]],
      ["reportVisitProgress", ["s3:GetObject"]],
      ["listVisitProofs", ["s3:GetObject"]],
    ] as const) {
      const statements = onObjects(`${operationId}Function`);
      expect(
        statements.flatMap((statement) => [statement.Action].flat()),
        operationId,
      ).toEqual(actions);
      for (const statement of statements) expect(JSON.stringify(statement.Resource), operationId).toMatch(/"\/proofs\/\*"/);
    }
    // ListBucket: the progress function only, on the bucket, for keys under proofs/ only.
    const listing = bucketStatements("reportVisitProgressFunction").filter((statement) =>
      ([statement.Action].flat() as string[]).includes("s3:ListBucket"),
    );
    expect(listing).toHaveLength(1);
    expect([listing[0]!.Action].flat()).toEqual(["s3:ListBucket"]);
    expect(JSON.stringify(listing[0]!.Resource)).not.toContain("/");
    expect((listing[0] as { Condition?: unknown }).Condition).toEqual({ StringLike: { "s3:prefix": ["proofs/*"] } });
    for (const operationId of ["createVisitProofUpload", "listVisitProofs"])
      expect(functionActions(base, `${operationId}Function`), operationId).not.toContain("s3:ListBucket");
    // The other visit functions touch no object at all.
    for (const operationId of ["createVisit", "patchVisit", "getVisit", "listVisitHistory"])
      expect(bucketStatements(`${operationId}Function`), operationId).toEqual([]);
  });
});
