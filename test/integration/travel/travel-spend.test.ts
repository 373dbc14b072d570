import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import type { Plan } from "#shared/domain/tenants/plans";
import { parseTravelProviders, type TravelProviderDeclaration } from "#shared/domain/travel/providers";
import { buildRoadMatrix, TravelMatrixError } from "#shared/domain/travel/road-matrix";
import { providerElementsAttribute, travelElementsBudget } from "#shared/domain/travel/spend";
import type { MeteredCounter } from "#shared/domain/usage/reservations";
import type { Location } from "#shared/routing/model";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { dynamoReservationStore } from "#shared/store/reservation-store";
import { osrmTableSource } from "#shared/travel/osrm";
import { type FakeOsrm, startFakeOsrm } from "#test/support/fake-osrm";
import { newOrganizationId } from "#test/support/local-api";

/**
 * A plan's monthly dollar cap of a provider, against a fake engine that counts the elements it is
 * asked: the cap ($1 at a declared $20 per 1,000 elements = 50 elements) is reserved on the tenant's
 * month counter (DynamoDB Local) before any request, so no matrix past it reaches the engine.
 */
const servers: FakeOsrm[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const grid = (count: number, from = 0): Location[] =>
  Array.from({ length: count }, (_, i) => ({ lat: -6.2 + 0.003 * (from + i), lng: 106.8 + 0.002 * (from + i) }));

describe("a provider's monthly dollar cap", () => {
  it("stops matrices before they ask the engine past $1, and a refused one holds nothing on either counter", async () => {
    const server = await startFakeOsrm({ maxTableSize: 10 });
    servers.push(server);
    const declaration = parseTravelProviders({
      providers: { city: { kind: "osrm", url: server.url, maxTableSize: 10, pricePer1000Elements: 20 } },
    }).providers.city as Extract<TravelProviderDeclaration, { kind: "osrm" }>;
    const plan: Plan = { name: "road-dollars", description: "", rate: 1, burst: 1, maxRunsQueued: 1, travelDollarsPerMonth: { city: 1 } };
    const organizationId = newOrganizationId();
    const counter = (attribute: string): MeteredCounter => ({
      key: keys.runSecondsTotal(organizationId, "2026-11"),
      attribute,
      itemAttributes: { entity: "runSeconds" },
    });
    const elementsBudget = travelElementsBudget({
      store: dynamoReservationStore,
      plan,
      provider: "city",
      declaration,
      planCounter: counter("travelElements"),
      providerCounter: counter(providerElementsAttribute("city")),
      now: new Date("2026-11-15T00:00:00Z"),
      elementsRefusal: () => "elements cap",
    });
    const matrix = (locations: Location[]) =>
      buildRoadMatrix({
        locations,
        source: osrmTableSource(declaration),
        cacheTtlMs: 1,
        now: () => 0,
        sleep: async () => undefined,
        elementsBudget,
      });

    // 36 elements ($0.72), then 9 more ($0.90): both fit and are asked.
    expect((await matrix(grid(6))).elementsRequested).toBe(36);
    expect((await matrix(grid(3, 10))).elementsRequested).toBe(9);
    expect(server.elements).toBe(45);

    // 9 more would be 54 elements ($1.08): refused before a single request.
    const requestsBefore = server.requests;
    const refused = await matrix(grid(3, 20)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TravelMatrixError);
    expect((refused as TravelMatrixError).message).toBe(
      "Monthly spend cap reached for the travel provider city: plan road-dollars allows $1.00 per month at $20.00 per 1,000 elements " +
        "(50 elements); 45 are used in 2026-11 ($0.90) and this run needs 9 more. The cap resets at 2026-12-01T00:00:00.000Z.",
    );
    expect(server.requests).toBe(requestsBefore);
    expect(server.elements).toBe(45);

    // What is left ($0.10 = 5 elements) still buys a 2-point matrix (4 elements); the plan's counter matches the provider's.
    expect((await matrix(grid(2, 30))).elementsRequested).toBe(4);
    expect(server.elements).toBe(49);
    const month = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.runSecondsTotal(organizationId, "2026-11"), ConsistentRead: true }),
    );
    expect(month.Item).toMatchObject({ travelElements: 49, [providerElementsAttribute("city")]: 49 });
  });
});
