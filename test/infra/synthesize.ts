import { App, NestedStack, type Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import type { CloudAssembly } from "aws-cdk-lib/cx-api";
import { buildApp } from "#infra/app";
import type { FieldOperationsStack } from "#infra/stacks/field-operations-stack";
import type { RouteDefinition } from "#shared/http/route";
import type { PlanOverrides } from "#shared/domain/tenants/plan-catalog";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repositoryRoot } from "#infra/repository-root";

/** The feature flags of cdk.json (`@aws-cdk/...`), which `cdk synth` applies: tests synthesize with them too. */
export const featureFlags: Record<string, unknown> = Object.fromEntries(
  Object.entries(
    (JSON.parse(readFileSync(join(repositoryRoot, "cdk.json"), "utf8")) as { context: Record<string, unknown> }).context,
  ).filter(([key]) => key.startsWith("@aws-cdk")),
);

export interface SynthesizedStack {
  stack: FieldOperationsStack;
  assembly: CloudAssembly;
  /** The root template and every nested one, by stack path. */
  templates: Array<{ name: string; template: Template; resourceCount: number }>;
  /** Every resource of every template in one (logical ids prefixed by their stack), for assertions across stacks. */
  all: Template;
}

/** Synthesizes without bundling (fast) unless asked; tests that bundle for real say so. */
export function synthesize(
  outdir: string,
  options: {
    context?: Record<string, unknown>;
    routes?: readonly RouteDefinition[];
    planOverrides?: PlanOverrides;
    flags?: Record<string, unknown>;
    beforeSynth?: (stack: FieldOperationsStack) => void;
  } = {},
): SynthesizedStack {
  const context = { ...(options.flags ?? featureFlags), "aws:cdk:bundling-stacks": [], ...options.context };
  const { app, stack } = buildApp(new App({ outdir, context }), { routes: options.routes, planOverrides: options.planOverrides });
  options.beforeSynth?.(stack);
  const assembly = app.synth();
  const stacks: Stack[] = [
    stack,
    ...stack.node.findAll().filter((construct): construct is NestedStack => NestedStack.isNestedStack(construct)),
  ];
  const templates = stacks.map((each) => {
    const template = Template.fromStack(each);
    return { name: each.node.path, template, resourceCount: Object.keys(template.toJSON().Resources ?? {}).length };
  });
  const merged: Record<string, unknown> = {};
  for (const { name, template } of templates) {
    for (const [logicalId, resource] of Object.entries(template.toJSON().Resources ?? {})) merged[`${name}/${logicalId}`] = resource;
  }
  return { stack, assembly, templates, all: Template.fromJSON({ Resources: merged }) };
}

/**
 * The IAM statements of the role a function runs as (inline policies of that role in the
 * function's own template), found by the function's construct id (`<operationId>Function`).
 */
export function functionStatements(
  synthesized: SynthesizedStack,
  functionId: string,
): Array<{ Action: string | string[]; Resource: unknown; Effect: string }> {
  for (const { template } of synthesized.templates) {
    const functions = template.findResources("AWS::Lambda::Function");
    const match = Object.entries(functions).find(([logicalId]) => new RegExp(`^${functionId}[0-9A-F]{8}$`).test(logicalId));
    if (!match) continue;
    const roleId = match[1].Properties.Role["Fn::GetAtt"][0] as string;
    return Object.values(template.findResources("AWS::IAM::Policy"))
      .filter((policy) => (policy.Properties.Roles as Array<{ Ref?: string }>).some((role) => role.Ref === roleId))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
  }
  throw new Error(`No function ${functionId} in any template`);
}

/** Every action a function's role allows, flattened and sorted. */
export function functionActions(synthesized: SynthesizedStack, functionId: string): string[] {
  return [...new Set(functionStatements(synthesized, functionId).flatMap((statement) => [statement.Action].flat()))].sort();
}
