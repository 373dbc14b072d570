import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { eventsOfChange } from "#shared/domain/webhooks/state-changes";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { created } from "#test/support/on-demand-runs";
import { plannedDay } from "#test/support/planned-day";

/**
 * Live route and ETAs through the local gateway and the real stores: a run, its dispatch, then GET
 * /vehicle/{vehicleId}/route before and after the driver's progress actions, and the ETA and risk events
 * each action's write of the live-route item means (the publisher's own reader over the item's images).
 */
const post = created;

/** The planned day (test/support/planned-day.ts), dispatched, with its driver's client. */
async function dispatchedDay() {
  const day = await plannedDay();
  const { api, organizationId, run, van } = day;
  expect((await api.post(`/routing/result/${run._id}/dispatch`, undefined)).body.data).toMatchObject({ success: 3, failed: 0 });
  const driver = apiClient(tokenFor({ organizationId, sub: "driver-1", permissions: ["edit/visit-progress", "view/visit"] }));
  const liveItem = async () =>
    (
      await documentClient().send(
        new GetCommand({ TableName: tableName(), Key: keys.vehicleLiveRoute(organizationId, van._id), ConsistentRead: true }),
      )
    ).Item as Record<string, unknown>;
  return { ...day, driver, liveItem };
}

const progress = (api: ApiClient, visitId: string, body: Record<string, unknown>) =>
  api.request("POST", `/visit/${visitId}/progress`, { body });

describe("GET /vehicle/{vehicleId}/route", () => {
  it("answers the dispatched route as planned, then re-projects it after the driver's actions", async () => {
    const day = await dispatchedDay();
    expect(day.trips.every((trip) => typeof trip.travelMinutes === "number" && trip.travelMinutes > 0)).toBe(true);

    const planned = await day.api.get(`/vehicle/${day.van._id}/route`);
    expect(planned.status).toBe(200);
    expect(planned.body.data).toMatchObject({
      vehicleId: day.van._id,
      routingResultId: day.result._id,
      currentVisitId: day.trips[0]?.visitId,
      position: null,
      projectedReturn: day.result.routes[0].arrival,
      overtimeMinutes: 0,
      pace: 1,
    });
    expect(planned.body.data.stops).toEqual(
      day.trips.map((trip) => ({
        visitId: trip.visitId,
        status: "ASSIGNED",
        plannedEta: trip.eta,
        projectedEta: trip.eta,
        projectedEtd: trip.etd,
        slackMinutes: expect.any(Number),
        risk: "ON_TIME",
      })),
    );

    // The first leg took an hour (the driver started it an hour ago): the day's pace is 1.5, later stops slip.
    const [first, second, third] = day.trips.map((trip) => trip.visitId) as [string, string, string];
    const hourAgo = new Date(Date.now() - 60 * 60_000).toISOString();
    expect((await progress(day.driver, first, { action: "start", at: hourAgo })).status).toBe(200);
    expect((await progress(day.driver, first, { action: "arrive" })).status).toBe(200);
    const after = (await day.api.get(`/vehicle/${day.van._id}/route`)).body.data;
    expect(after.pace).toBe(1.5);
    expect(after.currentVisitId).toBe(first);
    expect(after.stops[0]).toMatchObject({ visitId: first, status: "ARRIVED" });
    const minutes = (text: string) => Date.parse(`${text.replace(" ", "T")}:00Z`) / 60_000;
    const slip = (index: number) => minutes(after.stops[index].projectedEta) - minutes(after.stops[index].plannedEta);
    expect(slip(1)).toBeGreaterThanOrEqual(10);
    expect(slip(2)).toBeGreaterThanOrEqual(10);

    expect((await progress(day.driver, first, { action: "complete" })).status).toBe(200);
    const done = (await day.api.get(`/vehicle/${day.van._id}/route`)).body.data;
    expect(done.stops[0]).toMatchObject({ status: "DONE", projectedEta: expect.any(String), projectedEtd: expect.any(String), risk: null });
    expect(done.currentVisitId).toBe(second);
    void third;
  });

  it("announces one visit.eta.changed per slipped visit after a late arrive, and none for a move within 5 minutes", async () => {
    const day = await dispatchedDay();
    const [first, second, third] = day.trips.map((trip) => trip.visitId) as [string, string, string];
    const dispatched = await day.liveItem();
    await progress(day.driver, first, { action: "start", at: new Date(Date.now() - 60 * 60_000).toISOString() });
    const started = await day.liveItem();
    await progress(day.driver, first, { action: "arrive" });
    const arrived = await day.liveItem();
    // Completing now, ten minutes before the projected end of service: the next ETAs move again, within 5 minutes.
    await progress(day.driver, first, { action: "complete" });
    const completed = await day.liveItem();

    const at = new Date();
    const etaEvents = (before: Record<string, unknown>, after: Record<string, unknown>) =>
      eventsOfChange(before, after, at).flatMap((event) =>
        event.event.type === "visit.eta.changed" ? [{ id: event.id, data: event.event.data }] : [],
      );
    // Starting an hour ago does not move the stop it heads to past now + the leg: nothing announced yet for the others.
    const all = [...etaEvents(dispatched, started), ...etaEvents(started, arrived), ...etaEvents(arrived, completed)];
    const perVisit = (visitId: string) => all.filter((event) => event.data.visitId === visitId);
    expect(perVisit(second)).toHaveLength(1);
    expect(perVisit(third)).toHaveLength(1);
    expect(etaEvents(arrived, completed)).toEqual([]);
    const announced = perVisit(second)[0]!;
    expect(announced.data).toMatchObject({
      organizationId: day.organizationId,
      visitId: second,
      hubId: day.hub._id,
      vehicleId: day.van._id,
      routingResultId: day.result._id,
      plannedEta: day.trips[1]?.eta,
      previousEta: day.trips[1]?.eta,
    });
    // The id is derived from the change: the same images mean the same id.
    const again = [...etaEvents(dispatched, started), ...etaEvents(started, arrived)].find((event) => event.data.visitId === second);
    expect(again?.id).toBe(announced.id);
    // Each write of the live-route item is one conditional update of it (its state version counts them).
    expect((completed.progress as { version: number }).version).toBe(3);
  });

  it("is 404 for another organization's vehicle and for a vehicle of a hub the token does not allow; no stops before a dispatch", async () => {
    const { api, organizationId } = newTenant();
    const hub = await post(api, "/hub", { name: "Depot", address: "Jl. 1", lat: -6.2, lng: 106.8 });
    const van = await post(api, "/vehicle", { name: "Van", hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
    const none = await api.get(`/vehicle/${van._id}/route`);
    const notFound = { status: 404, failedCode: "sys-404" };
    expect(none.status).toBe(200);
    expect(none.body.data).toMatchObject({ routingResultId: null, stops: [], currentVisitId: null, projectedReturn: null });
    expect(refusal(await newTenant().api.get(`/vehicle/${van._id}/route`))).toEqual(notFound);
    const otherHub = apiClient(tokenFor({ organizationId, hubIds: ["another-hub"], permissions: ["view/vehicle"] }));
    expect(refusal(await otherHub.get(`/vehicle/${van._id}/route`))).toEqual(notFound);
    const noSlug = apiClient(tokenFor({ organizationId, permissions: ["view/visit"] }));
    expect(refusal(await noSlug.get(`/vehicle/${van._id}/route`))).toEqual({ status: 403, failedCode: "sys-035" });
    expect(refusal(await api.get("/vehicle/no-such-vehicle/route"))).toEqual(notFound);
    // The refused reads left the vehicle's route as it was.
    expect((await api.get(`/vehicle/${van._id}/route`)).body).toEqual(none.body);
  });
});
