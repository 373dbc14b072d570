import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createServer } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startDynamoDbLocal, startS3Emulator, startSqsEmulator } from "#local/emulators";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { ListQueuesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { repositoryRoot } from "#infra/repository-root";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { refusal } from "#test/support/refusals";
import { chromiumMissing, chromiumPath, launchChromium, testOutputPath } from "#test/support/chromium";

/**
 * The README's first command, for real: `npm start -- --in-memory` in its own process, a token from
 * `npm run --silent token`, requests against the printed base URL, and the README's walkthrough pasted into a
 * shell as a newcomer would.
 */
const run = promisify(execFile);

describe("npm start and npm run token", () => {
  let server: ChildProcess;
  let baseUrl: string;
  let port: number;
  let output = "";

  beforeAll(async () => {
    port = await freePort();
    server = spawn("npm", ["start", "--", "--in-memory"], {
      cwd: repositoryRoot,
      env: { ...process.env, PORT: String(port), LOG_LEVEL: "silent" },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    server.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    server.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 90_000;
    while (!/running at (\S+)/.test(output)) {
      if (Date.now() > deadline || server.exitCode !== null) throw new Error(`npm start did not come up:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    baseUrl = /running at (\S+)/.exec(output)?.[1] as string;
  }, 120_000);

  afterAll(async () => {
    if (server.pid && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      process.kill(-server.pid, "SIGTERM");
      await exited;
    }
  });

  it("serves /v3 on 127.0.0.1 and the port from PORT, printing the docs page and how to mint a token", () => {
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v3$/);
    expect(new URL(baseUrl).port).toBe(String(port));
    expect(output).toContain(`API docs page:     ${baseUrl}/docs`);
    expect(output).toContain("npm run --silent token -- --org");
    expect(output).not.toContain("${PORT");
  });

  it("runs the README's walkthrough (its shell block, as pasted) to a map and a GeoJSON file", async () => {
    const readme = readFileSync(join(repositoryRoot, "README.md"), "utf8");
    const block = /<!-- walkthrough:begin -->\n```bash\n([\s\S]*?)```\n<!-- walkthrough:end -->/.exec(readme)?.[1];
    expect(block, "README.md has no walkthrough block between its markers").toBeDefined();
    // Inside the repository (npm run finds package.json from there), in a gitignored directory.
    const directory = join(repositoryRoot, "test-output", `walkthrough-${process.pid}`);
    mkdirSync(directory, { recursive: true });
    try {
      // As pasted: the block sets its own shell options, and derives API from PORT as a user's shell would.
      const { API: _ignored, ...environment } = process.env;
      const { stdout } = await run("bash", ["-c", block as string], {
        cwd: directory,
        env: { ...environment, PORT: String(new URL(baseUrl).port) },
        timeout: 120_000,
      });
      expect(stdout).toMatch(/"status": "done"/);
      expect(stdout).toMatch(/"visitsAssigned": 3/);
      expect(stdout.trim().split("\n").at(-1)).toMatch(/^map\.svg: \d+ bytes; GeoJSON features: \d+$/);
      const svg = readFileSync(join(directory, "map.svg"), "utf8");
      expect(svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
      const geojson = JSON.parse(readFileSync(join(directory, "result.geojson"), "utf8")) as {
        type: string;
        features: Array<{ geometry: { type: string } | null; properties: Record<string, unknown> }>;
      };
      expect(geojson.type).toBe("FeatureCollection");
      // One van, three visits: one route line and three stops.
      expect(geojson.features.filter((feature) => feature.geometry?.type === "LineString")).toHaveLength(1);
      expect(
        geojson.features.filter((feature) => feature.properties.visitId !== undefined && feature.geometry?.type === "Point"),
      ).toHaveLength(3);
      // The walkthrough's map, printed: rendered to a PNG, each stop's name and ETA drawn in its side table.
      const stops = geojson.features
        .filter((feature) => feature.properties.kind === "stop")
        .map((feature) => ({ name: String(feature.properties.visitName), eta: String(feature.properties.eta) }));
      expect(stops.map((stop) => stop.name).sort()).toEqual(["Customer 1", "Customer 2", "Customer 3"]);
      if (chromiumPath) await expectStopTableInPng(join(directory, "map.svg"), stops);
      else console.warn(`the walkthrough's map is not rendered: ${chromiumMissing}`);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }, 150_000);

  it("runs docs/api/legacy-import.md's example (its shell block, as pasted) to a finished import", async () => {
    const page = readFileSync(join(repositoryRoot, "docs/api/legacy-import.md"), "utf8");
    const block = /<!-- example:begin -->\n```bash\n([\s\S]*?)```\n<!-- example:end -->/.exec(page)?.[1];
    expect(block, "docs/api/legacy-import.md has no example block between its markers").toBeDefined();
    const { API: _ignored, ...environment } = process.env;
    const { stdout } = await run("bash", ["-c", block as string], {
      cwd: repositoryRoot,
      env: { ...environment, PORT: String(new URL(baseUrl).port) },
      timeout: 120_000,
    });
    expect(JSON.parse(stdout.trim().split("\n").at(-1) as string)).toEqual({ status: "done", processed: 3, total: 3, errors: [] });
  }, 150_000);

  it("accepts a token printed by npm run --silent token (one JWT, nothing else on stdout)", async () => {
    const mint = async (...extra: string[]) => {
      const { stdout } = await run("npm", ["run", "--silent", "token", "--", "--org", "smoke-org", "--user", "smoke-user", ...extra], {
        cwd: repositoryRoot,
      });
      expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
      return stdout.trim();
    };
    const headersFor = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

    // Vehicles name an existing hub: an unrestricted token creates it first.
    const hubResponse = await fetch(`${baseUrl}/hub`, {
      method: "POST",
      headers: headersFor(await mint()),
      body: JSON.stringify({ name: "Depot", address: "Main St 1", lat: 52.5, lng: 13.4 }),
    });
    expect(hubResponse.status).toBe(201);
    const hubId = ((await hubResponse.json()) as { data: { _id: string } }).data._id;

    const token = await mint("--hubs", hubId);
    const claims = JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString());
    expect(claims).toMatchObject({ sub: "smoke-user", organizationId: "smoke-org", hubIds: [hubId] });

    const headers = headersFor(token);
    const created = await fetch(`${baseUrl}/vehicle`, { method: "POST", headers, body: JSON.stringify({ name: "Van", hubId }) });
    expect(created.status).toBe(201);
    const listed = (await (await fetch(`${baseUrl}/vehicles`, { headers })).json()) as { data: Array<{ name: string }> };
    expect(listed.data.map((v) => v.name)).toEqual(["Van"]);
  });

  it("runs an on-demand routing run to done (the run worker thread behind the gateway)", async () => {
    const { stdout } = await run("npm", ["run", "--silent", "token", "--", "--org", "run-org", "--user", "planner"], {
      cwd: repositoryRoot,
    });
    const headers = { authorization: `Bearer ${stdout.trim()}`, "content-type": "application/json" };
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${baseUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      expect(response.status, path).toBe(201);
      return ((await response.json()) as { data: { _id: string } }).data;
    };
    const hub = await post("/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
    await post("/vehicle", { name: "Van", hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
    for (const i of [1, 2, 3]) await post("/visit", { hubId: hub._id, name: `Stop ${i}`, coordinate: `${-6.2 + 0.01 * i},106.8` });
    const profile = await post("/routing/configuration", { name: "Plan", hubId: hub._id, timeLimitSeconds: 1 });
    const result = await post("/routing/result", { configurationId: profile._id });
    const deadline = Date.now() + 60_000;
    let status = "ongoing";
    while (status === "ongoing" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      status = ((await (await fetch(`${baseUrl}/routing/result/${result._id}`, { headers })).json()) as { data: { status: string } }).data
        .status;
    }
    expect(status).toBe("done");
  });

  it("rejects requests without a token", async () => {
    const refused = await fetch(`${baseUrl}/vehicles`);
    expect(refusal({ status: refused.status, body: await refused.json() })).toEqual({ status: 401, failedCode: "sys-401" });
  });
});

describe("npm start's command line and start-up failures", () => {
  const runStart = async (args: string[], env: Record<string, string> = {}) => {
    try {
      const { stdout, stderr } = await run("npm", ["start", "--silent", "--", ...args], {
        cwd: repositoryRoot,
        env: { ...process.env, ...env },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };

  it("prints usage for --help and exits 0", async () => {
    const { code, stdout } = await runStart(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("usage: npm start");
    expect(stdout).toContain("--in-memory");
    expect(stdout).toContain("--dynamodb-semantics local|strict");
  });

  it.each([
    [["--dynamodb-semantics", "production"], "--dynamodb-semantics is local or strict"],
    [["--dynamodb-semantics", "strict", "--dynamodb-throttle-rate", "2"], "--dynamodb-throttle-rate must be a number from 0 to 1"],
    [["--dynamodb-index-lag-ms", "100"], "--dynamodb-index-lag-ms needs --dynamodb-semantics strict"],
  ])("refuses DynamoDB semantics options %j it cannot honour, before starting anything", async (args, message) => {
    const { code, stderr } = await runStart(args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).toContain("usage: npm start");
  });

  it("refuses an unknown option with usage and a non-zero exit", async () => {
    const { code, stderr } = await runStart(["--bogus"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--bogus");
    expect(stderr).toContain("usage: npm start");
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  it("on a taken port prints one clear line, exits non-zero and leaves no emulator running", async () => {
    const squatter = createServer();
    await new Promise<void>((listening) => squatter.listen(0, "127.0.0.1", listening));
    const port = (squatter.address() as { port: number }).port;
    try {
      const server = spawn("npm", ["start", "--silent", "--", "--in-memory"], {
        cwd: repositoryRoot,
        env: { ...process.env, PORT: String(port), LOG_LEVEL: "silent" },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      server.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      server.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((exited) => server.once("exit", exited));
      expect(code).not.toBe(0);
      expect(output).toContain(`npm start: could not start: port ${port} on 127.0.0.1 is already in use`);
      expect(output).not.toMatch(/^\s+at /m);
      expect(output).not.toContain("running at");
      // Everything npm start spawned shares its process group (detached above): nothing of it may be left.
      const leftovers = execFileSync("ps", ["-e", "-o", "pgid=,args="], { encoding: "utf8" })
        .split("\n")
        .filter((line) => line.trim().split(/\s+/)[0] === String(server.pid));
      expect(leftovers).toEqual([]);
    } finally {
      await new Promise<void>((closed) => squatter.close(() => closed()));
    }
  });

  it("--dynamodb-endpoint, --s3-endpoint and --sqs-endpoint run the stack against emulators started elsewhere, and --endpoints is checked", async () => {
    const bad = await runStart(["--endpoints", "not-a-url"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("endpoint must be http(s)://host[:port]");
    const s3Directory = mkdtempSync(join(tmpdir(), "external-s3-"));
    const [dynamo, s3, sqs] = await Promise.all([startDynamoDbLocal(), startS3Emulator(s3Directory), startSqsEmulator()]);
    const server = spawn(
      "npm",
      [
        "start",
        "--silent",
        "--",
        "--in-memory",
        "--dynamodb-endpoint",
        dynamo.endpoint,
        "--s3-endpoint",
        s3.endpoint,
        "--sqs-endpoint",
        sqs.endpoint,
      ],
      {
        cwd: repositoryRoot,
        env: { ...process.env, PORT: "0", LOG_LEVEL: "silent" },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    try {
      let output = "";
      server.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      server.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const deadline = Date.now() + 90_000;
      while (!/running at (http:\/\/\S+\/v3)/.test(output)) {
        if (Date.now() > deadline || server.exitCode !== null) throw new Error(`npm start did not come up:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const baseUrl = /running at (http:\/\/\S+\/v3)/.exec(output)?.[1] as string;
      expect((await fetch(`${baseUrl}/openapi.json`)).status).toBe(200);
      const credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };
      // The table, bucket and queues were created on the emulators it was pointed at.
      expect(
        (await new DynamoDBClient({ region: "us-east-1", credentials, endpoint: dynamo.endpoint }).send(new ListTablesCommand({})))
          .TableNames,
      ).toContain("field-operations");
      expect(
        (
          await new S3Client({ region: "us-east-1", credentials, endpoint: s3.endpoint, forcePathStyle: true }).send(
            new ListBucketsCommand({}),
          )
        ).Buckets?.map((bucket) => bucket.Name),
      ).toContain("field-operations-files");
      const queues =
        (await new SQSClient({ region: "us-east-1", credentials, endpoint: sqs.endpoint }).send(new ListQueuesCommand({}))).QueueUrls ?? [];
      expect(queues.some((url) => url.endsWith("/routing-runs"))).toBe(true);
      expect(output).not.toMatch(/^\s+at /m);
    } finally {
      if (server.exitCode === null && server.pid) process.kill(-server.pid, "SIGTERM");
      await new Promise((resolve) => (server.exitCode !== null ? resolve(undefined) : server.once("exit", resolve)));
      await Promise.all([dynamo.stop(), s3.stop(), sqs.stop()]);
      rmSync(s3Directory, { recursive: true, force: true });
    }
  }, 180_000);
});

interface InkedText {
  text: string;
  box: { x: number; y: number; width: number; height: number };
  /** Dark pixels of the PNG inside the box: the text was drawn there. */
  ink: number;
}

/**
 * Renders an SVG file in headless Chromium to a PNG (test-output/walkthrough-map.png) and asserts that every stop's
 * name and ETA is a cell of the side table (`#stop-table`, one row each) and is drawn in the PNG: the PNG, decoded
 * by the browser, has dark pixels inside the cell's box. No OCR: the boxes come from the rendered page itself.
 */
async function expectStopTableInPng(svgPath: string, stops: Array<{ name: string; eta: string }>) {
  const svg = readFileSync(svgPath, "utf8");
  const width = Number(/<svg[^>]* width="(\d+)"/.exec(svg)?.[1]);
  const height = Number(/<svg[^>]* height="(\d+)"/.exec(svg)?.[1]);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width, height }, deviceScaleFactor: 1 });
    await page.goto(`file://${svgPath}`);
    const cells = (await page.evaluate(`[...document.querySelectorAll("#stop-table text")].map((node) => {
      const box = node.getBoundingClientRect();
      return { text: node.textContent, box: { x: box.x, y: box.y, width: box.width, height: box.height } };
    })`)) as Array<Omit<InkedText, "ink">>;
    const png = await page.screenshot({ path: testOutputPath("walkthrough-map.png") });
    // The PNG decoded by the browser (a canvas), and the dark pixels counted in every cell's box.
    const decoder = await browser.newPage();
    await decoder.setContent("<canvas></canvas>");
    const inked = (await decoder.evaluate(
      `(async ({ dataUrl, cells }) => {
        const image = new Image();
        image.src = dataUrl;
        await image.decode();
        const canvas = document.querySelector("canvas");
        canvas.width = image.width;
        canvas.height = image.height;
        const context = canvas.getContext("2d");
        context.drawImage(image, 0, 0);
        return { width: image.width, height: image.height, cells: cells.map((cell) => {
          const { x, y, width, height } = cell.box;
          if (width < 1 || height < 1) return { ...cell, ink: 0 };
          const pixels = context.getImageData(Math.floor(x), Math.floor(y), Math.ceil(width), Math.ceil(height)).data;
          let ink = 0;
          for (let i = 0; i < pixels.length; i += 4) if (pixels[i] + pixels[i + 1] + pixels[i + 2] < 3 * 128) ink++;
          return { ...cell, ink };
        }) };
      })(${JSON.stringify({ dataUrl: `data:image/png;base64,${png.toString("base64")}`, cells })})`,
    )) as { width: number; height: number; cells: InkedText[] };
    expect({ width: inked.width, height: inked.height }).toEqual({ width, height });
    for (const stop of stops) {
      const name = inked.cells.find((cell) => cell.text === stop.name);
      const eta = inked.cells.find((cell) => cell.text === stop.eta && cell.box.y === name?.box.y);
      expect(name, `${stop.name} in the side table`).toBeDefined();
      expect(eta, `${stop.name}'s ETA ${stop.eta} on its row`).toBeDefined();
      for (const cell of [name!, eta!]) {
        // Inside the picture, and drawn: a dozen or more dark pixels where the text is.
        expect(cell.box.y + cell.box.height).toBeLessThanOrEqual(height);
        expect(cell.ink, `"${cell.text}" drawn in the PNG`).toBeGreaterThan(12);
      }
    }
  } finally {
    await browser.close();
  }
}
