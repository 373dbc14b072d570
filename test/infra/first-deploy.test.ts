import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { productTemplates, synthesize, type SynthesizedTemplates } from "./synthesize.ts";

const outdirs: string[] = [];
const synthesizeIn = (options: Parameters<typeof synthesize>[1] = {}) => {
  const outdir = mkdtempSync(join(tmpdir(), "cdk-first-deploy-"));
  outdirs.push(outdir);
  return synthesize(outdir, options);
};
afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});
const rootOf = (synthesized: SynthesizedTemplates) => synthesized.templates[0]!.template;
const idOf = (resources: Record<string, unknown>) => Object.keys(resources)[0] as string;

describe("A first deploy in an account that never set API Gateway's CloudWatch role", { timeout: 300_000 }, () => {
  let base: SynthesizedTemplates;
  beforeAll(async () => {
    base = await productTemplates();
  });

  it("has the custom resource that sets the role only where none is set, and the stage waits for it", () => {
    const root = rootOf(base);
    const settings = root.findResources("Custom::ApiGatewayCloudWatchRole");
    expect(Object.keys(settings)).toHaveLength(1);
    const settingId = idOf(settings);
    const setting = settings[settingId]!;
    // Never removed by this stack, nor its role: other stacks' APIs may log as it.
    expect(setting.DeletionPolicy).toBe("Retain");
    expect(setting.UpdateReplacePolicy).toBe("Retain");
    const roleRef = setting.Properties.RoleArn["Fn::GetAtt"][0] as string;
    const role = root.toJSON().Resources[roleRef];
    expect(role).toMatchObject({ Type: "AWS::IAM::Role", DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
    expect(JSON.stringify(role.Properties.AssumeRolePolicyDocument)).toContain("apigateway.amazonaws.com");
    expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain("AmazonAPIGatewayPushToCloudWatchLogs");
    // Its handler is a function of the bundle, allowed to read and patch the account setting and pass only this role.
    const handlerId = setting.Properties.ServiceToken["Fn::GetAtt"][0] as string;
    expect(root.toJSON().Resources[handlerId].Properties.Description).toContain("CloudWatch Logs role");
    const handlerRole = root.toJSON().Resources[handlerId].Properties.Role["Fn::GetAtt"][0] as string;
    const statements = Object.values(root.findResources("AWS::IAM::Policy"))
      .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(handlerRole))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
    const actions = statements.flatMap((statement) => [statement.Action].flat());
    expect(actions).toEqual(expect.arrayContaining(["apigateway:GET", "apigateway:PATCH", "iam:GetRole", "iam:PassRole"]));
    const passRole = statements.find((statement) => statement.Action === "iam:PassRole");
    expect(passRole.Resource).toEqual({ "Fn::GetAtt": [roleRef, "Arn"] });
    // The stage (access logging) is created only after the setting is in place.
    const [stage] = Object.values(root.findResources("AWS::ApiGateway::Stage"));
    expect(stage?.DependsOn).toEqual(expect.arrayContaining([settingId]));
  });

  it("creates no account-wide AWS::ApiGateway::Account by default (the custom resource never overwrites a set role)", () => {
    rootOf(base).resourceCountIs("AWS::ApiGateway::Account", 0);
  });

  it("upgrades from installs that created ApiAccount/ApiCloudWatchRole: the upgrade step keeps both under their ids, retained", () => {
    const upgrade = synthesizeIn({ context: { apiGatewayAccountRole: "true" } });
    const resources = rootOf(upgrade).toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string; DependsOn?: string[] }>;
    const legacyRole = Object.entries(resources).find(([id]) => /^ApiCloudWatchRole[0-9A-F]{8}$/.test(id));
    const legacyAccount = Object.entries(resources).find(([id]) => /^ApiAccount[0-9A-F]{8}$/.test(id));
    expect(legacyRole?.[1]).toMatchObject({ Type: "AWS::IAM::Role", DeletionPolicy: "Retain" });
    expect(legacyAccount?.[1]).toMatchObject({ Type: "AWS::ApiGateway::Account", DeletionPolicy: "Retain" });
    // The custom resource reads the setting after the legacy one is in place, so it finds it and sets nothing.
    const [setting] = Object.values(rootOf(upgrade).findResources("Custom::ApiGatewayCloudWatchRole"));
    expect(setting?.DependsOn).toEqual(expect.arrayContaining([legacyAccount?.[0]]));
  });
});
