import { describe, expect, it } from "vitest";
import { newOrganizationId } from "#test/support/local-api";
import { createdOn, ownStackWithReceiver, until } from "#test/support/webhook-receiver";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";

/**
 * Positions drive the live route, end to end (own stack with the run worker, the stream publisher and the
 * delivery worker, and a webhook receiver): a dispatched van's driver reports positions; two slow samples
 * at the next stop arrive it (source geofence, one history entry, one `visit.arrived` delivery); far away
 * or with the profile's autoArrival off nothing arrives; a position that makes the route late announces one
 * `visit.eta.changed` per visit, and reports and actions within the minute / the 5 minutes announce no more.
 * The stream appends each dispatch to its visits' histories.
 */
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";
process.env.LOG_LEVEL = "silent";

const own = ownStackWithReceiver({ sub: "dispatcher" });
const { client, receiver } = own;
const received = receiver.received;

type Json = any;

const eventsAt = (path: string) =>
  received.filter((entry) => entry.path === path).map((entry) => JSON.parse(entry.body) as { type: string; data: Record<string, Json> });

/**
 * One van driven by driver-1 (not returning) with a visit 1.7 km from the depot and two about 15 km
 * further, planned and dispatched; a webhook of the organization's dispatcher hears `events`.
 */
async function dispatchedDay(options: { autoArrival: boolean; events: string[] }) {
  const organizationId = newOrganizationId();
  const dispatcher = client(organizationId);
  const hub = await createdOn(dispatcher, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
  const van = await createdOn(dispatcher, "/vehicle", { name: "Van", hubId: hub._id, assignee: "driver-1", workingTime: ALWAYS_ON_SHIFT });
  for (const [name, coordinate] of [
    ["near", "-6.215,106.8"],
    ["far-1", "-6.35,106.8"],
    ["far-2", "-6.355,106.81"],
  ])
    await createdOn(dispatcher, "/visit", { hubId: hub._id, name, coordinate });
  const profile = await createdOn(dispatcher, "/routing/configuration", {
    name: "Plan",
    hubId: hub._id,
    timeLimitSeconds: 1,
    returnToHub: false,
    autoArrival: options.autoArrival,
  });
  const path = `/hook-${organizationId}`;
  await createdOn(dispatcher, "/webhook", { url: `${receiver.url}${path}`, events: options.events });
  const run = await createdOn(dispatcher, "/routing/result", { configurationId: profile._id });
  const result = await until(
    "the run",
    async () => {
      const read = await dispatcher("GET", `/routing/result/${run._id}`);
      return read.body.data.status === "ongoing" ? undefined : read.body.data;
    },
    60_000,
  );
  expect(result.status).toBe("done");
  expect((await dispatcher("POST", `/routing/result/${run._id}/dispatch`)).body.data).toMatchObject({ success: 3, failed: 0 });
  const trips = result.routes[0].trips as Array<{ visitId: string }>;
  const driver = client(organizationId, {
    sub: "driver-1",
    permissions: ["add/vehicle-position", "edit/visit-progress", "view/visit", "view/vehicle"],
  });
  const report = async (positions: unknown[]) => {
    const answer = await driver("POST", `/vehicle/${van._id}/positions`, { positions });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    return answer.body.data;
  };
  const visitOf = async (visitId: string) => (await dispatcher("GET", `/visit/${visitId}`)).body.data;
  const historyOf = async (visitId: string) => (await dispatcher("GET", `/visit/${visitId}/history`)).body.data as Json[];
  // The stream appends each visit's dispatch to its history (shared/domain/visits/dispatch-history.ts).
  for (const trip of trips)
    await until(`${trip.visitId}'s dispatch entry`, async () => ((await historyOf(trip.visitId)).length > 0 ? true : undefined), 60_000);
  return { dispatcher, driver, van, trips, path, report, visitOf, historyOf, resultId: run._id as string };
}

const secondsAgo = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
/** The first stop ("near", -6.215, 106.8) and two slow samples a few metres from it. */
const atNearStop = (offsetLat = 0) => [
  { at: secondsAgo(40), lat: -6.21505 + offsetLat, lng: 106.80003, accuracyM: 5, speedKmh: 2 },
  { at: secondsAgo(10), lat: -6.21502 + offsetLat, lng: 106.80001, accuracyM: 5, speedKmh: 0 },
];

describe("Dispatch history", () => {
  it("a dispatch appends one entry per visit (UNASSIGNED → ASSIGNED by the dispatcher, naming vehicle and result); dispatching again appends none", async () => {
    const day = await dispatchedDay({ autoArrival: false, events: ["visit.started"] });
    for (const { visitId } of day.trips) {
      const [entry, ...more] = await day.historyOf(visitId);
      expect(more).toEqual([]);
      expect(entry).toMatchObject({
        from: "UNASSIGNED",
        to: "ASSIGNED",
        source: "dispatcher",
        userId: "dispatcher",
        position: null,
        vehicleId: day.van._id,
        routingResultId: day.resultId,
        version: 2, // the version the dispatch produced (the create made 1)
      });
      expect(Date.parse(entry.at)).toBeGreaterThan(Date.now() - 10 * 60_000);
    }
    // The same result dispatched again assigns nothing anew (its visits count as its own), so no entry.
    expect((await day.dispatcher("POST", `/routing/result/${day.resultId}/dispatch`)).body.data).toMatchObject({ success: 3, failed: 0 });
    const [first] = day.trips.map((trip) => trip.visitId) as [string];
    expect((await day.driver("POST", `/visit/${first}/progress`, { action: "start" })).status).toBe(200);
    // The start's event passes through the stream after anything the second dispatch wrote to the same visit.
    await until("the sentinel visit.started", () => eventsAt(day.path).find((event) => event.type === "visit.started"), 60_000);
    expect((await day.historyOf(first)).map((entry) => `${entry.from}>${entry.to}`)).toEqual(["UNASSIGNED>ASSIGNED", "ASSIGNED>EN_ROUTE"]);
  });
});

describe("Geofence arrival on positions", () => {
  it("two slow samples at the next stop arrive it once (source geofence, one history entry, one visit.arrived delivery)", async () => {
    const day = await dispatchedDay({ autoArrival: true, events: ["visit.arrived", "visit.completed"] });
    const [first, second] = day.trips.map((trip) => trip.visitId) as [string, string];
    // On the way: moving samples near the stop arrive nothing.
    await day.report([{ at: secondsAgo(70), lat: -6.212, lng: 106.8, speedKmh: 25 }]);
    expect((await day.visitOf(first)).status).toBe("ASSIGNED");

    const samples = atNearStop();
    expect(await day.report(samples)).toEqual({ accepted: 2, duplicates: 0, stale: 0 });
    const arrived = await day.visitOf(first);
    expect(arrived).toMatchObject({
      status: "ARRIVED",
      lastTransition: { from: "ASSIGNED", to: "ARRIVED", source: "geofence", userId: "driver-1" },
    });
    expect(arrived.lastTransition.at).toBe(new Date(samples[1]?.at as string).toISOString());
    expect(arrived.lastTransition.position).toMatchObject({ lat: samples[1]?.lat, lng: samples[1]?.lng });

    // A replay of the same samples, and more slow samples at the stop while the visit is ARRIVED: nothing more.
    expect(await day.report(samples)).toEqual({ accepted: 0, duplicates: 2, stale: 0 });
    await day.report([{ at: secondsAgo(5), lat: -6.21501, lng: 106.8, speedKmh: 0 }]);
    await day.report([{ at: secondsAgo(1), lat: -6.21502, lng: 106.8, speedKmh: 0 }]);
    expect((await day.historyOf(first)).map((entry) => `${entry.from}>${entry.to}`)).toEqual(["UNASSIGNED>ASSIGNED", "ASSIGNED>ARRIVED"]);
    expect((await day.visitOf(second)).status).toBe("ASSIGNED");
    // The live route starts from the arrived stop.
    expect((await day.dispatcher("GET", `/vehicle/${day.van._id}/route`)).body.data.currentVisitId).toBe(first);

    // The driver completes it (the sentinel delivery); both events reach the receiver, arrival once.
    expect((await day.driver("POST", `/visit/${first}/progress`, { action: "complete" })).status).toBe(200);
    await until(
      "visit.arrived and visit.completed",
      () => {
        const types = eventsAt(day.path).map((event) => event.type);
        return types.includes("visit.arrived") && types.includes("visit.completed") ? true : undefined;
      },
      60_000,
    );
    const arrivals = eventsAt(day.path).filter((event) => event.type === "visit.arrived");
    expect(arrivals).toHaveLength(1);
    expect(arrivals[0]?.data).toMatchObject({
      visitId: first,
      vehicleId: day.van._id,
      from: "ASSIGNED",
      to: "ARRIVED",
      source: "geofence",
    });
  });

  it("arrives nothing for slow samples away from the next stop, nor with the profile's autoArrival off", async () => {
    const far = await dispatchedDay({ autoArrival: true, events: ["visit.arrived"] });
    const [farFirst] = far.trips.map((trip) => trip.visitId) as [string];
    // 1.1 km from the next stop (and the stop after it is not the next stop).
    expect(await far.report(atNearStop(0.01))).toMatchObject({ accepted: 2 });
    expect((await far.visitOf(farFirst)).status).toBe("ASSIGNED");
    expect((await far.historyOf(farFirst)).map((entry) => entry.to)).toEqual(["ASSIGNED"]);

    const off = await dispatchedDay({ autoArrival: false, events: ["visit.arrived"] });
    const [offFirst] = off.trips.map((trip) => trip.visitId) as [string];
    expect(await off.report(atNearStop())).toMatchObject({ accepted: 2 });
    expect((await off.visitOf(offFirst)).status).toBe("ASSIGNED");
    expect((await off.historyOf(offFirst)).map((entry) => entry.to)).toEqual(["ASSIGNED"]);
  });
});

describe("Refresh on positions", () => {
  it("a position that makes the route late announces one visit.eta.changed per visit; no more within the minute or the 5 minutes", async () => {
    const day = await dispatchedDay({ autoArrival: false, events: ["visit.eta.changed", "visit.started"] });
    const visitIds = day.trips.map((trip) => trip.visitId);
    const [first] = visitIds as [string];
    // 25 km on the other side of the depot: the first leg from there is far longer than planned.
    expect(await day.report([{ at: secondsAgo(20), lat: -5.975, lng: 106.8, speedKmh: 40 }])).toMatchObject({ accepted: 1 });
    const route = (await day.dispatcher("GET", `/vehicle/${day.van._id}/route`)).body.data;
    expect(route.position).toMatchObject({ lat: -5.975, lng: 106.8 });
    await until("an ETA change per visit", () => (eventsAt(day.path).length >= visitIds.length ? true : undefined), 60_000);

    // Within the minute a small move refreshes nothing; within 5 minutes the driver's start announces no ETA again.
    expect(await day.report([{ at: secondsAgo(10), lat: -5.976, lng: 106.8, speedKmh: 40 }])).toMatchObject({ accepted: 1 });
    expect((await day.driver("POST", `/visit/${first}/progress`, { action: "start" })).status).toBe(200);
    await until("the sentinel visit.started", () => eventsAt(day.path).find((event) => event.type === "visit.started"), 60_000);

    const etaEvents = eventsAt(day.path).filter((event) => event.type === "visit.eta.changed");
    expect(etaEvents.map((event) => event.data.visitId).sort()).toEqual([...visitIds].sort());
    for (const event of etaEvents) {
      expect(event.data).toMatchObject({ vehicleId: day.van._id, previousEta: event.data.plannedEta });
      expect(event.data.eta > event.data.plannedEta).toBe(true);
    }
  });
});
