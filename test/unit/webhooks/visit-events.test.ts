import { describe, expect, it } from "vitest";
import { eventSchemas } from "#shared/domain/webhooks/events";
import { eventsOfChange } from "#shared/domain/webhooks/state-changes";

const at = new Date("2026-11-27T10:00:00Z");
const visitItem = (status: string, version: number | null, extra: Record<string, unknown> = {}) => ({
  entity: "visit",
  _id: "0123456789abcdef01234567",
  organizationId: "o",
  hubId: "h",
  assignedVehicleId: "veh-1",
  status,
  lastTransition:
    version === null
      ? null
      : {
          from: "ASSIGNED",
          to: status,
          at: "2026-11-27T09:59:00.000Z",
          source: "driver",
          userId: "d",
          position: null,
          failureReason: null,
          notes: null,
          version,
        },
  ...extra,
});

describe("Visit events from the table stream", () => {
  it.each([
    ["EN_ROUTE", "visit.started"],
    ["ARRIVED", "visit.arrived"],
    ["DONE", "visit.completed"],
    ["FAILED", "visit.failed"],
    ["UNASSIGNED", "visit.unassigned"],
  ])("a change reaching %s is %s, with a payload its schema accepts and an id derived from the change", (status, type) => {
    const events = eventsOfChange(visitItem("ASSIGNED", 2), visitItem(status, 3), at);
    expect(events.map((e) => e.event.type)).toEqual([type]);
    const [event] = events;
    expect(eventSchemas[type as keyof typeof eventSchemas].safeParse(event?.event).success).toBe(true);
    expect(event?.event.timestamp).toBe("2026-11-27T09:59:00.000Z");
    // The same stream record read twice: the same id.
    expect(eventsOfChange(visitItem("ASSIGNED", 2), visitItem(status, 3), at)[0]?.id).toBe(event?.id);
  });

  it("says nothing for a write that is no status change (an edit, a dispatch) or a status without an event", () => {
    expect(eventsOfChange(visitItem("EN_ROUTE", 3), visitItem("EN_ROUTE", 3, { name: "Renamed" }), at)).toEqual([]);
    expect(eventsOfChange(visitItem("UNASSIGNED", null), visitItem("ASSIGNED", null), at)).toEqual([]);
    expect(eventsOfChange(visitItem("ASSIGNED", 2), visitItem("CANCELLED", 3), at)).toEqual([]);
  });
});
