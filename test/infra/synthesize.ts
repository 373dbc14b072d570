import { App, NestedStack, type Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import type { CloudAssembly } from "aws-cdk-lib/cx-api";
import { buildApp } from "#infra/app";
import type { FieldOperationsStack } from "#infra/stacks/field-operations-stack";
import type { RouteDefinition } from "#shared/http/route";
import type { PlanOverrides } from "#shared/domain/tenants/plan-catalog";
import { createHash } from "node:crypto";
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
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
  synthesized: SynthesizedTemplates,
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
export function functionActions(synthesized: SynthesizedTemplates, functionId: string): string[] {
  return [...new Set(functionStatements(synthesized, functionId).flatMap((statement) => [statement.Action].flat()))].sort();
}

/** The templates of a synth, without the construct tree or the assembly behind them. */
export type SynthesizedTemplates = Pick<SynthesizedStack, "templates" | "all">;

/**
 * The product as `synthesize(outdir)` builds it (cdk.json's flags, no other context), synthesized
 * once per change of its sources and shared by every infra file: each synth costs seconds of CPU (the
 * construct tree, cdk-nag and CloudFormation validation), and a dozen files read the same templates.
 * The first file to need it synthesizes and writes the templates under node_modules/.cache, keyed by
 * a hash of what the synth reads; files running meanwhile wait for it. Files that synthesize with
 * other context, routes or flags, or need the construct tree or the assembly, call `synthesize`.
 */
export async function productTemplates(): Promise<SynthesizedTemplates> {
  const file = join(productCacheDirectory, `${productSourceHash()}.json`);
  const cached = (await readCached(file)) ?? (await synthesizeOnce(file));
  return fromCachedTemplates(cached);
}

const productCacheDirectory = join(repositoryRoot, "node_modules", ".cache", "field-operations-synth");
/** A lock older than this is a crashed writer's: the next file synthesizes itself. */
const staleLockMs = 5 * 60_000;

type CachedTemplates = Array<{ name: string; template: Record<string, unknown> }>;

/** What the synth reads: the app and everything it imports, the CDK flags, the installed packages and the environment it consults. */
function productSourceHash(): string {
  const hash = createHash("sha256");
  for (const directory of ["infra", "shared", "functions"]) {
    const root = join(repositoryRoot, directory);
    const files = (readdirSync(root, { recursive: true }) as string[])
      .filter((name) => name.endsWith(".ts") || name.endsWith(".json"))
      .sort();
    for (const name of files)
      hash
        .update(`${directory}/${name}\0`)
        .update(readFileSync(join(root, name)))
        .update("\0");
  }
  for (const name of ["cdk.json", "package-lock.json", "test/infra/synthesize.ts"]) hash.update(readFileSync(join(repositoryRoot, name)));
  for (const variable of ["TENANT_PLANS_FILE", "CDK_DEFAULT_ACCOUNT", "CDK_DEFAULT_REGION"])
    hash.update(`${variable}=${process.env[variable] ?? ""}\0`);
  return hash.digest("hex").slice(0, 32);
}

async function readCached(file: string): Promise<CachedTemplates | undefined> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as CachedTemplates;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Synthesizes and writes the cache, or waits for the file that took the lock to write it. */
async function synthesizeOnce(file: string): Promise<CachedTemplates> {
  mkdirSync(productCacheDirectory, { recursive: true });
  const lock = `${file}.lock`;
  for (;;) {
    try {
      closeSync(openSync(lock, "wx"));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const cached = await readCached(file);
    if (cached) return cached;
    const age = lockAge(lock);
    if (age !== undefined && age > staleLockMs) rmSync(lock, { force: true });
    else await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const outdir = mkdtempSync(join(tmpdir(), "cdk-product-"));
  try {
    const cached: CachedTemplates = synthesize(outdir).templates.map(({ name, template }) => ({ name, template: template.toJSON() }));
    // Written whole, then renamed: a reader never sees half a file.
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify(cached));
    renameSync(partial, file);
    return cached;
  } finally {
    rmSync(lock, { force: true });
    rmSync(outdir, { recursive: true, force: true });
  }
}

function lockAge(lock: string): number | undefined {
  try {
    return Date.now() - statSync(lock).mtimeMs;
  } catch {
    return undefined;
  }
}

function fromCachedTemplates(cached: CachedTemplates): SynthesizedTemplates {
  const templates = cached.map(({ name, template }) => ({
    name,
    template: Template.fromJSON(template),
    resourceCount: Object.keys((template.Resources as Record<string, unknown> | undefined) ?? {}).length,
  }));
  const merged: Record<string, unknown> = {};
  for (const { name, template } of cached) {
    for (const [logicalId, resource] of Object.entries((template.Resources as Record<string, unknown> | undefined) ?? {}))
      merged[`${name}/${logicalId}`] = resource;
  }
  return { templates, all: Template.fromJSON({ Resources: merged }) };
}
