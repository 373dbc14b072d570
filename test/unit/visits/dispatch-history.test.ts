import { describe, expect, it } from "vitest";
import { dispatchHistoryEntryOf } from "#shared/domain/visits/dispatch-history";

/** Images as the stream carries them (plain attributes of the visit item before and after a write). */
const base = { entity: "visit", _id: "v1", organizationId: "org", hubId: "h1" };
const unassigned = { ...base, status: "UNASSIGNED", version: 3, routingResultId: null, assignedVehicleId: null };
const byDispatcher = { source: "dispatcher", userId: "dispatcher-1", at: "2026-12-01T08:00:00.000Z" };
const dispatched = { ...base, status: "ASSIGNED", version: 4, routingResultId: "r1", assignedVehicleId: "van", dispatchedBy: byDispatcher };

describe("dispatchHistoryEntryOf", () => {
  it("reads a dispatch as the change from the status before to ASSIGNED, keyed by the version it produced", () => {
    expect(dispatchHistoryEntryOf(unassigned, dispatched)).toEqual({
      organizationId: "org",
      hubId: "h1",
      visitId: "v1",
      transition: {
        from: "UNASSIGNED",
        to: "ASSIGNED",
        at: "2026-12-01T08:00:00.000Z",
        source: "dispatcher",
        userId: "dispatcher-1",
        position: null,
        failureReason: null,
        notes: null,
        proofIds: [],
        version: 4,
        vehicleId: "van",
        routingResultId: "r1",
      },
    });
    expect(dispatchHistoryEntryOf({ ...unassigned, status: "ONGOING" }, dispatched)?.transition.from).toBe("ONGOING");
  });

  it("reads a re-plan's dispatch of a visit already ASSIGNED (a new result, another run's system dispatch) as an entry", () => {
    const replanned = {
      ...dispatched,
      version: 5,
      routingResultId: "r2",
      dispatchedBy: { source: "system", userId: "system", at: "2026-12-01T12:00:00.000Z" },
    };
    expect(dispatchHistoryEntryOf(dispatched, replanned)?.transition).toMatchObject({
      from: "ASSIGNED",
      to: "ASSIGNED",
      source: "system",
      userId: "system",
      version: 5,
      routingResultId: "r2",
    });
  });

  it("reads no entry from writes that are not a dispatch", () => {
    // The driver's undo (EN_ROUTE → ASSIGNED) records itself; the dispatch fields are the earlier dispatch's.
    const enRoute = { ...dispatched, status: "EN_ROUTE", version: 5 };
    expect(dispatchHistoryEntryOf(enRoute, { ...dispatched, version: 6 })).toBeUndefined();
    // A PATCH of an ASSIGNED visit's other fields.
    expect(dispatchHistoryEntryOf(dispatched, { ...dispatched, version: 5, name: "renamed" })).toBeUndefined();
    // The same image again (a write that did not move the version).
    expect(dispatchHistoryEntryOf(dispatched, dispatched)).toBeUndefined();
    // A hub move re-creates the item (an insert has no image before).
    expect(dispatchHistoryEntryOf(undefined, dispatched)).toBeUndefined();
    // A visit dispatched before dispatches were recorded (no dispatchedBy), and other entities.
    const { dispatchedBy: _, ...legacy } = dispatched;
    expect(dispatchHistoryEntryOf(unassigned, legacy)).toBeUndefined();
    expect(dispatchHistoryEntryOf({ ...unassigned, entity: "hub" }, { ...dispatched, entity: "hub" })).toBeUndefined();
    // Leaving ASSIGNED, or a removal.
    expect(dispatchHistoryEntryOf(dispatched, { ...dispatched, status: "DONE", version: 5 })).toBeUndefined();
    expect(dispatchHistoryEntryOf(dispatched, undefined)).toBeUndefined();
  });
});
