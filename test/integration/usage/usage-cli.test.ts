import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { type APIGatewayClient, GetUsageCommand, GetUsagePlansCommand } from "@aws-sdk/client-api-gateway";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { repositoryRoot } from "#infra/repository-root";
import { usagePlanCallsOf } from "#local/operator-usage";
import type { RunUsage } from "#shared/domain/usage/schema";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { recordRunUsage } from "#shared/store/usage-store";
import { meterAttempt } from "#shared/store/webhook-delivery-store";
import { newOrganizationId } from "#test/support/local-api";

/** `npm run usage` is `tsx local/usage-cli.ts`; run against the test stack's DynamoDB Local (AWS_ENDPOINT_URL_DYNAMODB). */
const run = promisify(execFile);
const usageCli = (...args: string[]) =>
  run(join(repositoryRoot, "node_modules", ".bin", "tsx"), [join(repositoryRoot, "local", "usage-cli.ts"), ...args], {
    cwd: repositoryRoot,
    env: process.env,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

const runUsage = (organizationId: string, runId: string, day: string, optimizerSeconds: number): RunUsage => ({
  organizationId,
  runId,
  kind: "onDemand",
  scheduleId: null,
  hubId: "hub",
  configurationId: "conf",
  day,
  outcome: "done",
  optimizerSeconds,
  memoryMb: 2048,
  visits: 10,
  vehicles: 2,
  travelElements: 0,
  time: `${day} 10:00:00`,
});

describe("npm run usage (local/usage-cli.ts)", () => {
  it("prints calls and runs per day with totals from the local store, as JSON and as a table; a run recorded twice counts once", async () => {
    const organizationId = newOrganizationId();
    const put = (item: Record<string, unknown>) => documentClient().send(new PutCommand({ TableName: tableName(), Item: item }));
    await put({ ...keys.callCounter(organizationId, "2026-03-01"), calls: 12 });
    await put({ ...keys.callCounter(organizationId, "2026-03-03"), calls: 5 });
    await put({ ...keys.callCounter(newOrganizationId(), "2026-03-01"), calls: 99 });
    // Two webhook delivery attempts metered on 2026-03-01, as the delivery worker meters them; one of another organization.
    for (let i = 0; i < 2; i++) await meterAttempt(organizationId, new Date("2026-03-01T10:00:00Z"));
    await meterAttempt(newOrganizationId(), new Date("2026-03-01T10:00:00Z"));
    expect(await recordRunUsage(runUsage(organizationId, "aaaaaaaaaaaaaaaaaaaaaaaa", "2026-03-01", 1.5), "2026-03")).toBe(true);
    expect(await recordRunUsage(runUsage(organizationId, "aaaaaaaaaaaaaaaaaaaaaaaa", "2026-03-01", 1.5), "2026-03")).toBe(false);
    expect(await recordRunUsage(runUsage(organizationId, "bbbbbbbbbbbbbbbbbbbbbbbb", "2026-03-03", 2.25), "2026-03")).toBe(true);
    expect(await recordRunUsage(runUsage(organizationId, "cccccccccccccccccccccccc", "2026-03-04", 9), "2026-03")).toBe(true);

    const json = await usageCli("--org", organizationId, "--from", "2026-03-01", "--to", "2026-03-03", "--json");
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ organizationId, from: "2026-03-01", to: "2026-03-03", callsSource: "local-gateway" });
    expect(report.days).toEqual([
      { day: "2026-03-01", calls: 12, runs: { count: 1, seconds: 1.5, travelElements: 0 }, webhookAttempts: 2 },
      { day: "2026-03-02", calls: 0, runs: { count: 0, seconds: 0, travelElements: 0 }, webhookAttempts: 0 },
      { day: "2026-03-03", calls: 5, runs: { count: 1, seconds: 2.25, travelElements: 0 }, webhookAttempts: 0 },
    ]);
    expect(report.totals).toEqual({ calls: 17, runs: { count: 2, seconds: 3.75, travelElements: 0 }, webhookAttempts: 2 });

    const table = await usageCli("--org", organizationId, "--from", "2026-03-01", "--to", "2026-03-03");
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(`Usage of organization ${organizationId}, 2026-03-01 to 2026-03-03`);
    expect(table.stdout).toMatch(/^total\s+17\s+2\s+3\.750\s+2$/m);
  }, 120_000);

  it("refuses a bad range or a missing --org with the usage (exit 2)", async () => {
    const cases = [
      ["--from", "2026-03-01", "--to", "2026-03-02"],
      ["--org", "o", "--from", "2026-03-02", "--to", "2026-03-01"],
      ["--org", "o", "--from", "2025-01-01", "--to", "2026-03-01"],
    ];
    const results = await Promise.all(cases.map((args) => usageCli(...args)));
    results.forEach((result, i) => {
      expect(result.code, cases[i]?.join(" ")).toBe(2);
      expect(result.stderr).toContain("usage: npm run usage");
    });
  }, 120_000);

  it("--aws reads calls per day from the usage plan of the tenant's API key (GetUsagePlans, then GetUsage pages)", async () => {
    // No API Gateway emulator exists: a stand-in client answers the two commands as API Gateway documents them.
    const organizationId = newOrganizationId();
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.tenant(organizationId), organizationId, plan: "standard", status: "active", apiKeyId: "key-1" },
      }),
    );
    const sent: unknown[] = [];
    const client = {
      send: async (command: unknown) => {
        sent.push(command);
        if (command instanceof GetUsagePlansCommand) return { items: [{ id: "plan-1" }] };
        if (command instanceof GetUsageCommand) {
          return command.input.position === undefined
            ? {
                items: {
                  "key-1": [
                    [4, 96],
                    [0, 96],
                  ],
                },
                position: "next",
              }
            : {
                items: {
                  "key-1": [
                    [0, 100],
                    [7, 93],
                  ],
                },
              };
        }
        throw new Error("unexpected command");
      },
    } as unknown as APIGatewayClient;
    const calls = await usagePlanCallsOf(organizationId, { from: "2026-03-01", to: "2026-03-02" }, client);
    expect(Object.fromEntries(calls)).toEqual({ "2026-03-01": 4, "2026-03-02": 7 });
    expect((sent[1] as GetUsageCommand).input).toMatchObject({
      usagePlanId: "plan-1",
      keyId: "key-1",
      startDate: "2026-03-01",
      endDate: "2026-03-02",
    });
  });

  it("sums the calls of every usage plan the key belonged to in the period: calls made before a plan change count", async () => {
    const organizationId = newOrganizationId();
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.tenant(organizationId),
          organizationId,
          plan: "standard",
          status: "active",
          apiKeyId: "key-2",
          createdTime: "2026-02-01T00:00:00.000Z",
          planHistory: [
            { plan: "free", from: "2026-02-01T00:00:00.000Z", to: "2026-03-02T12:00:00.000Z", usagePlanId: "up-free" },
            // Recorded without a usage plan id: found by its name (<stack>-<plan>).
            { plan: "standard", from: "2026-03-02T12:00:00.000Z" },
          ],
        },
      }),
    );
    const asked: string[] = [];
    const client = {
      send: async (command: unknown) => {
        if (command instanceof GetUsagePlansCommand)
          return command.input.keyId
            ? { items: [{ id: "up-standard", name: "FieldOperations-standard" }] }
            : {
                items: [
                  { id: "up-free", name: "FieldOperations-free" },
                  { id: "up-standard", name: "FieldOperations-standard" },
                  { id: "up-other", name: "Other-standard" },
                ],
              };
        if (command instanceof GetUsageCommand) {
          asked.push(command.input.usagePlanId as string);
          return command.input.usagePlanId === "up-free"
            ? {
                items: {
                  "key-2": [
                    [5, 0],
                    [3, 0],
                  ],
                },
              }
            : {
                items: {
                  "key-2": [
                    [0, 0],
                    [2, 0],
                  ],
                },
              };
        }
        throw new Error("unexpected command");
      },
    } as unknown as APIGatewayClient;
    const calls = await usagePlanCallsOf(organizationId, { from: "2026-03-01", to: "2026-03-02" }, client, "FieldOperations");
    expect(Object.fromEntries(calls)).toEqual({ "2026-03-01": 5, "2026-03-02": 5 });
    expect(asked.sort()).toEqual(["up-free", "up-standard"]);
  });
});
