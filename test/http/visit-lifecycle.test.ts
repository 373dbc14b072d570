import { describe, expect, it } from "vitest";
import { markVisitDispatched } from "#shared/app/visits";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { expectRefused, refusal } from "#test/support/refusals";

/**
 * The visit lifecycle through the local gateway: the driver's progress route, the dispatcher's PATCH
 * under the lifecycle table, each change's history, the vehicle's one current stop.
 */
async function dispatchedVisit(options: { assignee?: string } = {}) {
  const tenant = newTenant({ sub: "dispatcher-1" });
  const { api, organizationId } = tenant;
  const hub = (await api.post("/hub", { name: "Depot", address: "Jl. 1", lat: -6.2, lng: 106.8 })).body.data._id as string;
  const vehicle = (
    await api.post("/vehicle", {
      name: "Van",
      hubId: hub,
      assignee: options.assignee ?? "driver-1",
      workingTime: { startTime: "00:00", endTime: "23:59", multiday: 0 },
    })
  ).body.data._id as string;
  const visit = async (order: number) => {
    const created = (await api.post("/visit", { hubId: hub, name: `Stop ${order}`, coordinate: { lat: -6.21, lng: 106.81 } })).body.data;
    const dispatch = {
      assignedVehicleId: vehicle,
      routingResultId: "r1",
      routePlannedOrder: order,
      eta: "2026-12-01 09:10",
      etd: "2026-12-01 09:25",
    };
    expect(
      await markVisitDispatched(organizationId, hub, created._id, dispatch, "2026-12-01 08:00:00", {
        source: "dispatcher",
        userId: "dispatcher-1",
        at: "2026-12-01T08:00:00Z",
      }),
    ).toBe(true);
    return created._id as string;
  };
  const driver = apiClient(
    tokenFor({ organizationId, sub: options.assignee ?? "driver-1", permissions: ["edit/visit-progress", "view/visit"] }),
  );
  return { ...tenant, hub, vehicle, visit, driver };
}

const progress = (api: ApiClient, visitId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  api.request("POST", `/visit/${visitId}/progress`, { body, headers });

describe("Visit lifecycle", () => {
  describe("POST /visit/{visitId}/progress", () => {
    it("takes a visit through start, arrive and complete, storing each change and its history", async () => {
      const { driver, visit, api } = await dispatchedVisit();
      const id = await visit(1);
      const position = { lat: -6.2101, lng: 106.8102, accuracyM: 8 };
      const started = await progress(driver, id, { action: "start", position });
      expect(started.status).toBe(200);
      expect(started.body.data).toMatchObject({
        status: "EN_ROUTE",
        lastTransition: { from: "ASSIGNED", to: "EN_ROUTE", source: "driver", userId: "driver-1", position },
      });
      expect((await progress(driver, id, { action: "arrive" })).body.data.status).toBe("ARRIVED");
      const done = await progress(driver, id, { action: "complete", notes: "Left at the door" });
      expect(done.status).toBe(200);
      expect(done.body.data).toMatchObject({ status: "DONE", lastTransition: { from: "ARRIVED", to: "DONE", notes: "Left at the door" } });
      expect((await api.get(`/visit/${id}`)).body.data.status).toBe("DONE");

      const history = await api.get(`/visit/${id}/history?limit=2`);
      expect(history.status).toBe(200);
      expect(history.body.data.map((t: { from: string; to: string }) => `${t.from}>${t.to}`)).toEqual([
        "ASSIGNED>EN_ROUTE",
        "EN_ROUTE>ARRIVED",
      ]);
      const rest = await api.get(`/visit/${id}/history?limit=2&cursor=${encodeURIComponent(history.body.nextCursor)}`);
      expect(rest.body.data.map((t: { to: string }) => t.to)).toEqual(["DONE"]);
      expect(rest.body.nextCursor).toBeNull();
    });

    it("answers every illegal move 409 visit-409 naming from, to and the allowed targets, and changes nothing", async () => {
      const { driver, visit, api } = await dispatchedVisit();
      const id = await visit(1);
      const undo = await progress(driver, id, { action: "undo" });
      expect(undo.status).toBe(409);
      expect(undo.body).toMatchObject({
        status: false,
        failedCode: "visit-409",
        from: "ASSIGNED",
        to: "ASSIGNED",
      });
      expect(await progress(driver, id, { action: "fail", failureReason: "NOBODY_HOME" })).toMatchObject({ status: 200 });
      for (const action of ["start", "arrive", "complete", "undo"]) {
        const refused = await progress(driver, id, { action });
        expect(refused.status).toBe(409);
        expect(refused.body).toMatchObject({ failedCode: "visit-409", from: "FAILED", allowed: [] });
      }
      const after = (await api.get(`/visit/${id}`)).body.data;
      expect(after).toMatchObject({ status: "FAILED", failureReason: "NOBODY_HOME", attempts: 0 });
      expect((await api.get(`/visit/${id}/history`)).body.data).toHaveLength(1);
    });

    it("counts an attempt when a dispatcher puts a failed visit back in the pool, and records the dispatcher's change", async () => {
      const { driver, visit, api } = await dispatchedVisit();
      const id = await visit(1);
      await progress(driver, id, { action: "fail", failureReason: "OTHER", notes: "Gate locked" });
      const back = await api.patch(`/visit/${id}`, { status: "UNASSIGNED" });
      expect(back.status).toBe(200);
      expect(back.body.data).toMatchObject({
        status: "UNASSIGNED",
        attempts: 1,
        failureReason: null,
        assignedVehicleId: null,
        lastTransition: { from: "FAILED", to: "UNASSIGNED", source: "dispatcher", userId: "dispatcher-1" },
      });
      // A dispatcher still cannot set the driver's statuses.
      const enRoute = await expectRefused(
        api,
        { method: "PATCH", path: `/visit/${id}`, body: { status: "EN_ROUTE" } },
        { status: 400, failedCode: "sys-400", unchanged: `/visit/${id}` },
      );
      expect(enRoute.body.errors[0].field).toBe("status");
    });

    it("holds the vehicle for one visit at a time (409 visit-411) until that one is done", async () => {
      const { driver, visit, api } = await dispatchedVisit();
      const first = await visit(1);
      const second = await visit(2);
      expect((await progress(driver, first, { action: "start" })).status).toBe(200);
      const busy = await progress(driver, second, { action: "start" });
      expect(busy.status).toBe(409);
      expect(busy.body.failedCode).toBe("visit-411");
      expect((await api.get(`/visit/${second}`)).body.data.status).toBe("ASSIGNED");
      expect((await progress(driver, first, { action: "complete" })).status).toBe(200);
      expect((await progress(driver, second, { action: "arrive" })).status).toBe(200);
    });

    it("lets only the vehicle's driver or an edit/visit holder report (403 visit-403), another organization 404, no token 401, no slug 403", async () => {
      const { driver, visit, organizationId, api } = await dispatchedVisit();
      const id = await visit(1);
      const otherDriver = apiClient(tokenFor({ organizationId, sub: "driver-2", permissions: ["edit/visit-progress"] }));
      const refused = await progress(otherDriver, id, { action: "start" });
      expect(refused.status).toBe(403);
      expect(refused.body.failedCode).toBe("visit-403");
      const foreign = newTenant();
      expect(refusal(await progress(foreign.api, id, { action: "start" }))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await progress(apiClient(undefined), id, { action: "start" }))).toEqual({ status: 401, failedCode: "sys-401" });
      const noSlug = apiClient(tokenFor({ organizationId, sub: "driver-1", permissions: ["view/visit"] }));
      expect(refusal(await progress(noSlug, id, { action: "start" }))).toEqual({ status: 403, failedCode: "sys-035" });
      expect((await api.get(`/visit/${id}`)).body.data.status).toBe("ASSIGNED");
      // A dispatcher (edit/visit) may act for the driver.
      expect((await progress(api, id, { action: "start" })).status).toBe(200);
      expect((await api.get(`/visit/${id}`)).body.data.lastTransition.userId).toBe("dispatcher-1");
      void driver;
    });

    it("refuses bad bodies with 400 and stores nothing", async () => {
      const { driver, visit, api } = await dispatchedVisit();
      const id = await visit(1);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ action: "teleport" }, "action"],
        [{ action: "fail" }, "failureReason"],
        [{ action: "fail", failureReason: "OTHER" }, "notes"],
        [{ action: "complete", failureReason: "REFUSED" }, "failureReason"],
        [{ action: "start", at: "yesterday" }, "at"],
        [{ action: "start", at: new Date(Date.now() - 25 * 3600_000).toISOString() }, "at"],
        [{ action: "start", at: new Date(Date.now() + 5 * 60_000).toISOString() }, "at"],
        [{ action: "start", position: { lat: 95, lng: 0 } }, "position.lat"],
        [{ action: "start", extra: 1 }, "extra"],
      ];
      for (const [body, field] of cases) {
        const response = await progress(driver, id, body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      }
      expect((await api.get(`/visit/${id}`)).body.data.status).toBe("ASSIGNED");
      expect((await api.get(`/visit/${id}/history`)).body.data).toEqual([]);
    });

    it("replays an action sent again with its Idempotency-Key, and honours If-Match", async () => {
      const { driver, visit, api } = await dispatchedVisit();
      const id = await visit(1);
      const key = { "idempotency-key": "offline-event-1" };
      const first = await progress(driver, id, { action: "start", at: new Date().toISOString() }, key);
      expect(first.status).toBe(200);
      const again = await driver.request("POST", `/visit/${id}/progress`, {
        body: JSON.parse(JSON.stringify({ action: "start", at: first.body.data.lastTransition.at })),
        headers: key,
      });
      // The same key with another body is refused (idem-422); the same request replays.
      expect([200, 422]).toContain(again.status);
      if (again.status === 422) expect(refusal(again)).toEqual({ status: 422, failedCode: "idem-422" });
      const stale = await progress(driver, id, { action: "arrive" }, { "if-match": '"1"' });
      expect(refusal(stale)).toEqual({ status: 412, failedCode: "sys-412" });
      const etag = (await api.get(`/visit/${id}`)).headers.get("etag") as string;
      expect((await progress(driver, id, { action: "arrive" }, { "if-match": etag })).status).toBe(200);
      expect((await api.get(`/visit/${id}/history`)).body.data).toHaveLength(2);
    });
  });

  describe("GET /visit/{visitId}/history", () => {
    it("is 404 for another organization and 401 without a token", async () => {
      const { visit } = await dispatchedVisit();
      const id = await visit(1);
      expect(refusal(await newTenant().api.get(`/visit/${id}/history`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await apiClient(undefined).get(`/visit/${id}/history`))).toEqual({ status: 401, failedCode: "sys-401" });
    });
  });
});
