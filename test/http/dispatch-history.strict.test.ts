import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it } from "vitest";
import { recordDispatchHistory } from "#shared/app/visits";
import { type DispatchHistoryEntry, dispatchHistoryEntryOf } from "#shared/domain/visits/dispatch-history";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { type ApiClient, newTenant } from "#test/support/local-api";
import { created, runOnDemand } from "#test/support/on-demand-runs";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { resetStrictDynamoDb } from "#test/support/strict-dynamodb";

/**
 * The dispatch entries of visits' histories under production DynamoDB semantics: the stream's consumer
 * (functions/jobs/webhook-publisher.ts) writes them with BatchWriteItem, 25 a request, and DynamoDB
 * answers throttled items as UnprocessedItems rather than failing the call ("BatchWriteItem", Amazon
 * DynamoDB API Reference: "If DynamoDB returns any unprocessed items, you should retry the batch
 * operation on those items"). The shared test stack runs no stream poller, so the test derives the
 * entries from the visit items before and after a real dispatch, as the consumer does from the
 * stream's images, and hands them to the store.
 */
afterEach(() => {
  resetStrictDynamoDb();
});

const VISITS = 30;

async function visitItem(organizationId: string, hubId: string, visitId: string) {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.visit(organizationId, hubId, visitId), ConsistentRead: true }),
  );
  return output.Item;
}

async function historyOf(api: ApiClient, visitId: string) {
  const response = await api.get(`/visit/${visitId}/history`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as Array<Record<string, unknown>>;
}

describe("Dispatch history entries (the stream consumer's batched puts)", () => {
  it(`stores all ${VISITS} entries of a dispatch when half of the BatchWriteItem items come back unprocessed, and a replay adds none`, async () => {
    const { api, organizationId } = newTenant({ sub: "dispatcher-1" });
    const hub = await created(api, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
    for (const name of ["Van 1", "Van 2"]) await created(api, "/vehicle", { name, hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
    const batch = await api.post("/visits/batch", {
      visits: Array.from({ length: VISITS }, (_, i) => ({
        hubId: hub._id,
        name: `Stop ${i + 1}`,
        coordinate: `${-6.2 - 0.002 * (i + 1)},${106.8 + 0.001 * (i % 5)}`,
      })),
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    const visitIds = (batch.body.data as Array<{ status: number; data: { _id: string } }>).map((item) => item.data._id);
    expect(visitIds).toHaveLength(VISITS);
    const profile = await created(api, "/routing/configuration", { name: "Plan", hubId: hub._id, timeLimitSeconds: 1 });
    const result = await runOnDemand(api, profile._id);
    expect(result).toMatchObject({ status: "done", summary: { visitsAssigned: VISITS } });

    const before = await Promise.all(visitIds.map((visitId) => visitItem(organizationId, hub._id, visitId)));
    const dispatched = await api.post(`/routing/result/${result._id}/dispatch`, undefined);
    expect(dispatched.body.data).toMatchObject({ success: VISITS, failed: 0 });
    const after = await Promise.all(visitIds.map((visitId) => visitItem(organizationId, hub._id, visitId)));
    const entries = visitIds
      .map((_, i) => dispatchHistoryEntryOf(before[i], after[i]))
      .filter((entry): entry is DispatchHistoryEntry => entry !== undefined);
    expect(entries).toHaveLength(VISITS);

    const semantics = resetStrictDynamoDb({ throttleRate: 0.5, throttleOperations: ["BatchWriteItem"] });
    await recordDispatchHistory(entries);
    expect(semantics.counters().throttledBatchItems).toBeGreaterThan(0);
    // A stream record is delivered at least once: the replay writes the same items again.
    await recordDispatchHistory(entries);
    resetStrictDynamoDb();

    const vehicleOf = new Map(
      (result.routes as Array<{ vehicleId: string; trips: Array<{ visitId: string }> }>).flatMap((route) =>
        route.trips.map((trip) => [trip.visitId, route.vehicleId] as const),
      ),
    );
    for (const visitId of visitIds) {
      expect(await historyOf(api, visitId), visitId).toEqual([
        expect.objectContaining({
          from: "UNASSIGNED",
          to: "ASSIGNED",
          source: "dispatcher",
          userId: "dispatcher-1",
          vehicleId: vehicleOf.get(visitId),
          routingResultId: result._id,
        }),
      ]);
    }
  });
});
