import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { parseTravelProviders, type TravelProviderDeclaration } from "#shared/domain/travel/providers";
import { buildRoadMatrix, type ElementsBudget, TravelMatrixError } from "#shared/domain/travel/road-matrix";
import { type MeteredCounter, reserveWithinCap } from "#shared/domain/usage/reservations";
import type { Location } from "#shared/routing/model";
import { osrmTableSource } from "#shared/travel/osrm";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { dynamoReservationStore } from "#shared/store/reservation-store";
import { type FakeOsrm, type FakeOsrmOptions, startFakeOsrm } from "#test/support/fake-osrm";
import { newOrganizationId } from "#test/support/local-api";
import { resetStrictDynamoDb } from "#test/support/strict-dynamodb";

// The cap is one conditional ADD on one counter item per reservation: DynamoDB applies single-item
// conditional writes one at a time and cancels none of them, so the model has no conflict to raise
// here. What it does raise is throttling: concurrent runs hit one counter item, a hot key that
// production DynamoDB throttles, and a throttled reservation is retried, never charged twice.

/**
 * The travel-elements cap under production DynamoDB semantics (test/support/strict-dynamodb.ts):
 * elements are reserved on the month's counter with one conditional write before the engine is
 * asked, and settled with what it answered, so concurrent runs cannot all pass a cap only some fit,
 * and the counter ends equal to the elements the engine answered — failed matrices included.
 */
const servers: FakeOsrm[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function engine(options: FakeOsrmOptions = {}) {
  const server = await startFakeOsrm(options);
  servers.push(server);
  return server;
}

const declared = (server: FakeOsrm, settings: Record<string, unknown> = {}) =>
  parseTravelProviders({ providers: { city: { kind: "osrm", url: server.url, ...settings } } }).providers.city as Extract<
    TravelProviderDeclaration,
    { kind: "osrm" }
  >;

const grid = (count: number): Location[] => Array.from({ length: count }, (_, i) => ({ lat: -6.2 + 0.003 * i, lng: 106.8 + 0.002 * i }));

function budget(organizationId: string, cap: number): { counter: MeteredCounter; elementsBudget: ElementsBudget } {
  const counter: MeteredCounter = {
    key: keys.runSecondsTotal(organizationId, "2026-11"),
    attribute: "travelElements",
    itemAttributes: { entity: "runSeconds" },
  };
  return {
    counter,
    elementsBudget: {
      reserve: async (elements) => {
        const outcome = await reserveWithinCap(dynamoReservationStore, counter, elements, cap);
        return outcome.granted ? undefined : `cap reached: ${outcome.used} used`;
      },
      settle: (reserved, answered) => dynamoReservationStore.settle(counter, reserved, answered),
    },
  };
}

async function used(counter: MeteredCounter): Promise<number> {
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: counter.key, ConsistentRead: true }));
  return Number(output.Item?.travelElements ?? 0);
}

const noSleep = async () => undefined;

describe("travel-elements cap (strict DynamoDB semantics)", () => {
  it("of 10 concurrent 9-element matrices against a cap of 18, at most 2 are granted; the counter holds what the engine answered", async () => {
    const server = await engine({ maxTableSize: 10 });
    const { counter, elementsBudget } = budget(newOrganizationId(), 18);
    const semantics = resetStrictDynamoDb({ throttleRate: 0.3, throttleOperations: ["UpdateItem"], seed: 3 });
    const runs = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        buildRoadMatrix({
          locations: grid(3),
          source: osrmTableSource(declared(server, { maxTableSize: 10 })),
          cacheTtlMs: 1,
          now: () => 0,
          sleep: noSleep,
          elementsBudget,
        }),
      ),
    ).finally(() => semantics.configure({ throttleRate: 0 }));
    // The test would prove nothing about throttled reservations if none had been throttled.
    expect(semantics.counters().throttledCalls).toBeGreaterThan(0);
    const granted = runs.filter((run) => run.status === "fulfilled");
    expect(granted.length).toBeLessThanOrEqual(2);
    expect(granted.length).toBeGreaterThan(0);
    for (const run of runs) if (run.status === "rejected") expect((run.reason as TravelMatrixError).message).toMatch(/^cap reached/);
    expect(server.requests).toBe(granted.length);
    expect(await used(counter)).toBe(9 * granted.length);
  });

  it("a matrix that fails half-way is charged the elements answered, and its retry the rest", async () => {
    const failing = await engine({ maxTableSize: 2, fault: (request) => (request >= 4 ? { status: 502, code: "BadGateway" } : undefined) });
    const { counter, elementsBudget } = budget(newOrganizationId(), 1000);
    const points = grid(4);
    let stored: Parameters<NonNullable<Parameters<typeof buildRoadMatrix>[0]["cache"]>["write"]>[0] | undefined;
    const cache = {
      read: async () => stored,
      write: async (matrix: NonNullable<typeof stored>) => {
        stored = matrix;
      },
    };
    const source = (server: FakeOsrm) => osrmTableSource(declared(server, { maxTableSize: 2, concurrency: 1, retries: 0 }));
    const failed = await buildRoadMatrix({
      locations: points,
      source: source(failing),
      cache,
      cacheTtlMs: 10,
      now: () => 0,
      sleep: noSleep,
      elementsBudget,
    }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(TravelMatrixError);
    // Three 2×2 tiles answered of four: 12 elements, all the engine answered.
    expect(await used(counter)).toBe(12);

    const healthy = await engine({ maxTableSize: 2 });
    const retried = await buildRoadMatrix({
      locations: points,
      source: source(healthy),
      cache,
      cacheTtlMs: 10,
      now: () => 1,
      sleep: noSleep,
      elementsBudget,
    });
    expect(retried.elementsRequested).toBe(12);
    expect(await used(counter)).toBe(24);
  });
});
