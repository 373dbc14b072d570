/**
 * Cold-start weight of every function: bundles each entry with the options the CDK stack uses
 * (infra/bundling.ts), then loads each bundle in fresh `node` processes and prints its bytes, the
 * median module-load time and the ratio to a baseline bundle that holds only the DynamoDB
 * document client. Rounds interleave all bundles so machine noise hits them alike.
 *
 *   npm run bench:cold                       # 10 loads per bundle
 *   npm run bench:cold -- --runs 5 --source-maps   # as deployed with -c sourceMaps=true
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { routes } from "#functions/routes";
import { bundleEntries } from "#infra/bundling";
import { repositoryRoot } from "#infra/repository-root";

const { values } = parseArgs({ options: { runs: { type: "string", default: "10" }, "source-maps": { type: "boolean", default: false } } });
const runs = Number(values.runs);
const sourceMaps = values["source-maps"] ?? false;

const outdir = mkdtempSync(join(tmpdir(), "bench-cold-"));
try {
  const baselineEntry = "bench/cold-baseline.ts";
  const entries = [
    ...new Set([...routes.map((route) => route.handler), "functions/jobs/scheduler-tick.ts", "functions/jobs/routing-run.ts"]),
  ];
  const started = performance.now();
  const bundles = bundleEntries([baselineEntry, ...entries], { repositoryRoot, outdir, sourceMaps });
  const bundleSeconds = (performance.now() - started) / 1000;

  const targets = [
    ...[...bundles].map(([entry, directory]) => ({
      name: entry === baselineEntry ? "baseline (DynamoDB document client only)" : entry,
      file: join(directory, "index.js"),
    })),
  ];
  const nodeArgs = sourceMaps ? ["--enable-source-maps"] : [];
  // Wall time and the CPU time (user + system) the process spent loading the module: on a busy machine
  // the wall time also counts waiting for a core, the CPU time does not.
  const loadScript =
    "const t=performance.now(),c=process.cpuUsage();require(process.argv[1]);const u=process.cpuUsage(c);process.stdout.write(String(performance.now()-t)+' '+String((u.user+u.system)/1000))";
  const samples = new Map(targets.map((target) => [target.file, [] as number[]]));
  const cpuSamples = new Map(targets.map((target) => [target.file, [] as number[]]));
  for (let round = 0; round < runs; round++) {
    for (const target of targets) {
      const output = execFileSync(process.execPath, [...nodeArgs, "-e", loadScript, target.file], {
        cwd: outdir,
        env: { ...process.env, AWS_REGION: "eu-west-1" },
      });
      const [wallMs, cpuMs] = output.toString().split(" ").map(Number);
      samples.get(target.file)!.push(wallMs as number);
      cpuSamples.get(target.file)!.push(cpuMs as number);
    }
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const baselineMs = median(samples.get(targets[0]!.file)!);
  console.log(
    `bundled ${entries.length} entries in one esbuild run: ${bundleSeconds.toFixed(1)} s; source maps ${sourceMaps ? "on" : "off"}; median of ${runs} loads each`,
  );
  console.log(
    `${"bundle".padEnd(52)} ${"KiB".padStart(7)} ${"map KiB".padStart(8)} ${"load ms".padStart(8)} ${"ratio".padStart(6)} ${"CPU ms".padStart(7)}`,
  );
  // The target is the API functions' (each request waits for their cold start); the jobs are listed for reference.
  const overTarget: string[] = [];
  let worstApi = 0;
  for (const target of targets) {
    const ms = median(samples.get(target.file)!);
    const ratio = ms / baselineMs;
    if (target !== targets[0] && target.name.startsWith("functions/http/")) {
      worstApi = Math.max(worstApi, ratio);
      if (ratio > 1.3) overTarget.push(`${target.name} ${ratio.toFixed(2)}`);
    }
    const mapBytes = sourceMaps ? statSync(`${target.file}.map`).size : 0;
    console.log(
      `${target.name.padEnd(52)} ${(statSync(target.file).size / 1024).toFixed(0).padStart(7)} ${(mapBytes / 1024).toFixed(0).padStart(8)} ${ms.toFixed(1).padStart(8)} ${ratio.toFixed(2).padStart(6)} ${median(cpuSamples.get(target.file)!).toFixed(1).padStart(7)}`,
    );
  }
  console.log(
    `worst API function ratio ${worstApi.toFixed(2)} (target ≤ 1.30); over the target: ${overTarget.length === 0 ? "none" : overTarget.join(", ")}`,
  );
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
