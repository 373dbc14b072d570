import { describe, expect, it } from "vitest";
import { permissionSlugs } from "#functions/routes";
import { newOrganizationId } from "#test/support/local-api";
import { createdOn, ownStackWithReceiver, type StackCall, until } from "#test/support/webhook-receiver";
import { refusal } from "#test/support/refusals";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";

/**
 * Webhook rights and dispatch announcements end to end (own stack with the run worker, the stream
 * publisher and the delivery worker): a subscription receives only what its creator may read, only
 * its owner (or an organization-wide administrator) changes it, and every dispatch of a result is
 * recorded and announced once, concurrent or in the same second.
 */
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";
process.env.LOG_LEVEL = "silent";

const own = ownStackWithReceiver({ sub: "admin" });
const { client, receiver } = own;
const received = receiver.received;

type Json = any;
type Call = StackCall;

/** A hub with `vehicles` vehicles of capacity 2 and `visits` visits of load 1, and a profile. */
async function hubWithFleet(call: Call, name: string, vehicles: number, visits: number) {
  const hub = await createdOn(call, "/hub", { name, address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
  const fleet = [];
  for (let i = 0; i < vehicles; i++)
    fleet.push(
      await createdOn(call, "/vehicle", {
        name: `${name} van ${i + 1}`,
        hubId: hub._id,
        workingTime: ALWAYS_ON_SHIFT,
        capacity: { weight: { max: 2 } },
      }),
    );
  for (let i = 0; i < visits; i++)
    await createdOn(call, "/visit", {
      hubId: hub._id,
      name: `${name} stop ${i + 1}`,
      coordinate: { lat: -6.2 + 0.01 * (i + 1), lng: 106.8 + 0.005 * i },
      capacity: { weight: 1 },
    });
  const profile = await createdOn(call, "/routing/configuration", { name: `${name} plan`, hubId: hub._id, timeLimitSeconds: 1 });
  return { hub, fleet, profile };
}

const eventsAt = (path: string) =>
  received.filter((entry) => entry.path === path).map((entry) => JSON.parse(entry.body) as { type: string; data: Record<string, Json> });

async function doneResult(call: Call, profileId: string) {
  const result = await createdOn(call, "/routing/result", { configurationId: profileId });
  return until(
    "the run",
    async () => {
      const read = await call("GET", `/routing/result/${result._id}`);
      return read.body.data.status === "ongoing" ? undefined : read.body.data;
    },
    60_000,
  );
}

describe("Webhook subscriptions see what their creator may read", () => {
  it("a hub-restricted creator receives its own hub's events and none of another hub's or organization-wide ones", async () => {
    const organizationId = newOrganizationId();
    const admin = client(organizationId);
    const h1 = await hubWithFleet(admin, "North", 1, 2);
    const h2 = await hubWithFleet(admin, "South", 1, 2);
    const scoped = client(organizationId, { sub: "south-planner", hubIds: [h2.hub._id] });
    const events = ["routing.result.completed", "data-type.import.completed"];
    const hook = await createdOn(scoped, "/webhook", { url: `${receiver.url}/scoped-${organizationId}`, events });
    expect(hook).toMatchObject({ createdBy: "south-planner", hubIds: [h2.hub._id] });
    await createdOn(admin, "/webhook", { url: `${receiver.url}/all-${organizationId}`, events });

    const north = await createdOn(admin, "/routing/result", { configurationId: h1.profile._id });
    const south = await createdOn(admin, "/routing/result", { configurationId: h2.profile._id });
    // The organization-wide subscription hears both runs: both were announced.
    await until("both runs announced", () => (eventsAt(`/all-${organizationId}`).length >= 2 ? true : undefined), 90_000);
    await until("the scoped delivery", () => eventsAt(`/scoped-${organizationId}`)[0], 30_000);
    // One publish opens the deliveries of every subscription an event goes to: the scoped one's list is complete now.
    const opened = (await scoped("GET", `/webhook/${hook._id}/deliveries`)).body.data as Array<{ eventType: string }>;
    expect(opened.map((delivery) => delivery.eventType)).toEqual(["routing.result.completed"]);
    const resultIdsAtScoped = eventsAt(`/scoped-${organizationId}`)
      .filter((event) => event.type === "routing.result.completed")
      .map((event) => event.data.resultId);
    expect(resultIdsAtScoped).toEqual([south._id]);
    expect(
      eventsAt(`/all-${organizationId}`)
        .map((event) => event.data.resultId)
        .sort(),
    ).toEqual([north._id, south._id].sort());
  }, 180_000);

  it("a creator without view/routing-result cannot subscribe to routing.result.* (403 sys-035 naming the slug), nor add it by PATCH", async () => {
    const organizationId = newOrganizationId();
    const withoutResults = client(organizationId, {
      sub: "imports-only",
      permissions: [...permissionSlugs].filter((slug) => slug !== "view/routing-result"),
    });
    for (const type of ["routing.result.completed", "routing.result.failed", "routing.result.dispatched"]) {
      const refused = await withoutResults("POST", "/webhook", { url: `${receiver.url}/x`, events: [type] });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ status: false, failedCode: "sys-035" });
      expect(refused.body.message).toContain("view/routing-result");
    }
    expect((await withoutResults("GET", "/webhooks")).body.data).toEqual([]);
    const hook = await createdOn(withoutResults, "/webhook", { url: `${receiver.url}/x`, events: ["data-type.import.completed"] });
    const patched = await withoutResults("PATCH", `/webhook/${hook._id}`, { events: ["routing.result.completed"] });
    expect(patched.status).toBe(403);
    expect(patched.body.failedCode).toBe("sys-035");
    expect((await withoutResults("GET", `/webhook/${hook._id}`)).body.data.events).toEqual(["data-type.import.completed"]);
    const noSchedules = client(organizationId, {
      sub: "no-schedules",
      permissions: [...permissionSlugs].filter((slug) => slug !== "view/routing-schedule"),
    });
    const skipped = await noSchedules("POST", "/webhook", { url: `${receiver.url}/x`, events: ["routing.schedule.skipped"] });
    expect(refusal(skipped)).toEqual({ status: 403, failedCode: "sys-035" });
    expect(skipped.body.message).toContain("view/routing-schedule");
  });

  it("a hub-restricted caller cannot repoint or delete another user's subscription; its owner and an organization-wide administrator can", async () => {
    const organizationId = newOrganizationId();
    const admin = client(organizationId);
    const adminHook = await createdOn(admin, "/webhook", { url: `${receiver.url}/admin`, events: ["routing.result.completed"] });
    const intruder = client(organizationId, { sub: "intruder", hubIds: ["h2"] });
    const repointed = await intruder("PATCH", `/webhook/${adminHook._id}`, { url: `${receiver.url}/stolen` });
    expect(repointed.status).toBe(403);
    expect(repointed.body.failedCode).toBe("webhook-403");
    const before = (await admin("GET", `/webhook/${adminHook._id}`)).body;
    expect(refusal(await intruder("DELETE", `/webhook/${adminHook._id}`))).toEqual({ status: 403, failedCode: "webhook-403" });
    expect(before.data.url).toBe(`${receiver.url}/admin`);
    expect((await admin("GET", `/webhook/${adminHook._id}`)).body).toEqual(before);

    // The hub-restricted owner changes its own; an administrator may too, and does not change its scope.
    const own = await createdOn(intruder, "/webhook", { url: `${receiver.url}/own`, events: ["routing.result.completed"] });
    const ownPatched = await intruder("PATCH", `/webhook/${own._id}`, { description: "mine" });
    expect(ownPatched.status).toBe(200);
    expect(ownPatched.body.data.hubIds).toEqual(["h2"]);
    const byAdmin = await admin("PATCH", `/webhook/${own._id}`, { enabled: false });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.data).toMatchObject({ createdBy: "intruder", hubIds: ["h2"], enabled: false });
    // Another hub-restricted user of the same hub is not its owner either.
    const colleague = client(organizationId, { sub: "colleague", hubIds: ["h2"] });
    const beforeColleague = (await admin("GET", `/webhook/${own._id}`)).body;
    expect(refusal(await colleague("PATCH", `/webhook/${own._id}`, { enabled: true }))).toEqual({ status: 403, failedCode: "webhook-403" });
    expect((await admin("GET", `/webhook/${own._id}`)).body).toEqual(beforeColleague);
    expect((await intruder("DELETE", `/webhook/${own._id}`)).status).toBe(200);
  });
});

describe("Dispatch records and announces every dispatch", () => {
  async function threeVehicleResult(admin: Call) {
    const { profile } = await hubWithFleet(admin, "Fleet", 3, 6);
    const result = await doneResult(admin, profile._id);
    expect(result.status, JSON.stringify(result)).toBe("done");
    const body = (await admin("GET", `/routing/result/${result._id}`)).body.data;
    const vehicleIds = (body.routes as Array<{ vehicleId: string; trips: unknown[] }>)
      .filter((route) => route.trips.length > 0)
      .map((route) => route.vehicleId);
    expect(vehicleIds).toHaveLength(3);
    return { result, vehicleIds };
  }

  /**
   * A fourth dispatch of every vehicle is the sentinel: its change follows the three on the same
   * item's stream, so once its event arrived, the three were published (and their deliveries opened).
   */
  async function afterSentinel(call: Call, resultId: string, hookId: string, path: string) {
    expect((await call("POST", `/routing/result/${resultId}/dispatch`)).status).toBe(200);
    await until(
      "the sentinel dispatch",
      () => eventsAt(path).find((event) => event.type === "routing.result.dispatched" && event.data.vehicleIds.length === 3),
      60_000,
    );
    const deliveries = (await call("GET", `/webhook/${hookId}/deliveries?limit=100`)).body.data as Array<{ eventType: string }>;
    return deliveries.filter((delivery) => delivery.eventType === "routing.result.dispatched");
  }

  for (const mode of ["concurrent", "sequential"] as const) {
    it(`3 ${mode} per-vehicle dispatches: vehicleIds holds all three and exactly three routing.result.dispatched arrive`, async () => {
      const organizationId = newOrganizationId();
      const admin = client(organizationId);
      const path = `/dispatch-${mode}-${organizationId}`;
      const hook = await createdOn(admin, "/webhook", { url: `${receiver.url}${path}`, events: ["routing.result.dispatched"] });
      const { result, vehicleIds } = await threeVehicleResult(admin);
      const dispatchOne = (vehicleId: string) => admin("POST", `/routing/result/${result._id}/dispatch?vehicleIds=${vehicleId}`);
      const answers =
        mode === "concurrent"
          ? await Promise.all(vehicleIds.map(dispatchOne))
          : [await dispatchOne(vehicleIds[0]!), await dispatchOne(vehicleIds[1]!), await dispatchOne(vehicleIds[2]!)];
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);

      const record = (await admin("GET", `/routing/result/${result._id}`)).body.data.dispatch;
      expect([...record.vehicleIds].sort()).toEqual([...vehicleIds].sort());
      // Three dispatches and the sentinel: four deliveries opened, four distinct events.
      expect(await afterSentinel(admin, result._id, hook._id, path)).toHaveLength(4);
      // Four deliveries are open, but each is sent on its own, so the sentinel's may land before
      // the other three: wait for all four to arrive, then check that no fifth exists.
      const distinctEvents = () =>
        new Map(
          received.filter((entry) => entry.path === path).map((entry) => [String(entry.headers["webhook-id"]), JSON.parse(entry.body)]),
        );
      await until("the four dispatch events", () => (distinctEvents().size >= 4 ? true : undefined), 60_000);
      const distinct = distinctEvents();
      expect(distinct.size).toBe(4);
      const perVehicle = [...distinct.values()].filter((event) => event.data.vehicleIds.length === 1);
      expect(perVehicle.map((event) => event.data.vehicleIds[0]).sort()).toEqual([...vehicleIds].sort());
    }, 180_000);
  }
});
