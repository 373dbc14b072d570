import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "#local/emulators";
import { repositoryRoot } from "#infra/repository-root";

/**
 * A routing schedule end to end through `npm start`'s own scheduler: its ticker claims the slot and
 * enqueues the run, its queue poller feeds the run worker, and the result appears through the API.
 * The slot's tick is asked for on standard input (`--tick-on-stdin`: the tick the clock would send
 * at that minute, sent now), so the test waits for no real minute boundary.
 */
const run = promisify(execFile);

describe("Scheduler end to end (npm start -- --in-memory)", () => {
  let server: ChildProcess;
  let baseUrl: string;
  let output = "";

  beforeAll(async () => {
    const port = await freePort();
    server = spawn("npm", ["start", "--", "--in-memory", "--tick-on-stdin"], {
      cwd: repositoryRoot,
      env: { ...process.env, PORT: String(port), LOG_LEVEL: "silent", APP_TIMEZONE: "UTC" },
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
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
    if (server?.pid && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      process.kill(-server.pid, "SIGTERM");
      await exited;
    }
  });

  it("a byDate schedule one minute ahead produces a SCHEDULER result and sets logExecuted", async () => {
    const { stdout } = await run("npm", ["run", "--silent", "token", "--", "--org", "e2e-org", "--user", "e2e-user"], {
      cwd: repositoryRoot,
    });
    const headers = { authorization: `Bearer ${stdout.trim()}`, "content-type": "application/json" };
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as any };
    };
    const create = async (path: string, body: unknown) => {
      const response = await call("POST", path, body);
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      return response.body.data;
    };

    const hub = await create("/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
    for (const name of ["Van 1", "Van 2"]) await create("/vehicle", { name, hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
    const visits = [];
    for (let i = 0; i < 4; i++)
      visits.push(
        await create("/visit", { hubId: hub._id, name: `Stop ${i + 1}`, coordinate: { lat: -6.2 + 0.01 * (i + 1), lng: 106.8 } }),
      );
    const profile = await create("/routing/configuration", { name: "E2E plan", hubId: hub._id, timeLimitSeconds: 2 });

    // The first minute boundary at least 30 s ahead (UTC): the next boundary can be milliseconds away,
    // and a slot already past when the schedule is saved would never run.
    const runAt = new Date(Math.ceil((Date.now() + 30_000) / 60_000) * 60_000);
    const [date, time] = runAt.toISOString().slice(0, 16).split("T") as [string, string];
    const schedule = await create("/routing/schedule", {
      name: "E2E run",
      configurationId: profile._id,
      periode: "byDate",
      schedules: [{ date, time: [time] }],
      autoDispatch: true,
    });
    expect(schedule.nextRunTime).toBe(`${date} ${time}`);
    // The slot's minute, ticked now: what the minute ticker sends when the clock reaches it.
    const ticked = `ticked for ${runAt.toISOString()}`;
    server.stdin?.write(`${runAt.toISOString()}\n`);
    const tickDeadline = Date.now() + 60_000;
    while (!output.includes(ticked) && Date.now() < tickDeadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(output).toContain(ticked);

    let results: any[] = [];
    let logExecuted: any;
    const deadline = Date.now() + 170_000;
    while (Date.now() < deadline) {
      results = (await call("GET", "/routing/results?createdFrom=SCHEDULER")).body.data;
      logExecuted = (await call("GET", `/routing/schedule/${schedule._id}`)).body.data.logExecuted;
      if (logExecuted && results[0]?.status !== "ongoing") break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }

    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      name: `E2E run - ${date} ${time}`,
      createdFrom: "SCHEDULER",
      status: "done",
      scheduleId: schedule._id,
      hubId: hub._id,
      summary: { visitsPlanned: 4, visitsAssigned: 4 },
    });
    expect(logExecuted).toMatchObject({ status: "SUCCESS", routingResultId: results[0]._id, dispatched: { success: 4, failed: 0 } });
    for (const visit of visits)
      expect((await call("GET", `/visit/${visit._id}`)).body.data).toMatchObject({ status: "ASSIGNED", routingResultId: results[0]._id });
    // byDate: nothing left to run.
    expect((await call("GET", `/routing/schedule/${schedule._id}`)).body.data.nextRunTime).toBeNull();
  }, 180_000);
});
