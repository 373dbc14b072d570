import { describe, expect, it } from "vitest";
import { isLoaded, type LiveRoute, liveVehiclesOf } from "#shared/domain/runs/live-day";
import type { Visit, VisitStatus } from "#shared/domain/visits/schema";
import { visit } from "#test/unit/runs/plan-fixtures";

/**
 * Which still-ASSIGNED visits a re-optimization keeps on their vehicle (pinned) and which it releases to the
 * pool: `keepVehicle` keeps all, `free` keeps only loaded ones, `releaseVehicleIds` releases a vehicle's all.
 */
const route = (vehicleId: string, visitIds: string[]): LiveRoute => ({
  vehicleId,
  hubId: "hub-1",
  resultId: "r1",
  visitIds,
  departure: "2026-03-02 08:00",
  timeZone: "UTC",
  dispatchedTime: "2026-03-02 08:00:00",
});
const on = (id: string, vehicleId: string, status: VisitStatus, extra: Partial<Visit> = {}) =>
  visit(id, { status, assignedVehicleId: vehicleId, routingResultId: "r1", ...extra });
const ids = (visits: readonly Visit[]) => visits.map((v) => v._id);

describe("released and pinned visits of a live day", () => {
  it("keepVehicle (the default) pins every ASSIGNED visit", () => {
    const visits = [on("a", "v1", "DONE"), on("b", "v1", "ASSIGNED"), on("c", "v1", "ASSIGNED")];
    const [live] = liveVehiclesOf([route("v1", ["a", "b", "c"])], visits);
    expect(ids(live!.pinned)).toEqual(["b", "c"]);
    expect(live!.released).toEqual([]);
  });

  it("free: a vehicle still at the hub (nothing of its route started) releases everything", () => {
    const visits = [on("a", "v1", "ASSIGNED"), on("b", "v1", "ASSIGNED")];
    const [live] = liveVehiclesOf([route("v1", ["a", "b"])], visits, { assigned: "free" });
    expect(live!.pinned).toEqual([]);
    expect(ids(live!.released)).toEqual(["a", "b"]);
  });

  it("free: a vehicle on the road keeps its loaded deliveries, releases pickups and deliveries whose pickup is not done", () => {
    const visits = [
      on("s", "v1", "EN_ROUTE"),
      on("d1", "v1", "ASSIGNED"),
      on("p", "v1", "ASSIGNED"),
      on("q", "v1", "ASSIGNED", { pickupVisitId: "p" }),
      on("pDone", "v1", "DONE"),
      on("qLoaded", "v1", "ASSIGNED", { pickupVisitId: "pDone" }),
    ];
    const [live] = liveVehiclesOf([route("v1", ["s", "d1", "p", "q", "pDone", "qLoaded"])], visits, { assigned: "free" });
    expect(ids(live!.pinned)).toEqual(["d1", "qLoaded"]);
    expect(ids(live!.released)).toEqual(["p", "q"]);
    expect(isLoaded(visits[1]!, visits)).toBe(true);
    expect(isLoaded(visits[2]!, visits)).toBe(false);
  });

  it("releaseVehicleIds releases all of those vehicles' ASSIGNED visits, the committed stop stays committed, other vehicles keep theirs", () => {
    const visits = [on("a", "v1", "ARRIVED"), on("b", "v1", "ASSIGNED"), on("c", "v2", "ASSIGNED")];
    const [first, second] = liveVehiclesOf([route("v1", ["a", "b"]), route("v2", ["c"])], visits, {
      assigned: "keepVehicle",
      releaseVehicleIds: ["v1"],
    });
    expect(first!.committed?._id).toBe("a");
    expect(first!.pinned).toEqual([]);
    expect(ids(first!.released)).toEqual(["b"]);
    expect(ids(second!.pinned)).toEqual(["c"]);
  });

  it("a visit taken by another vehicle since is neither pinned nor released by this one", () => {
    const visits = [on("a", "v2", "ASSIGNED")];
    const [live] = liveVehiclesOf([route("v1", ["a"])], visits, { assigned: "free" });
    expect(live!.pinned).toEqual([]);
    expect(live!.released).toEqual([]);
  });
});
