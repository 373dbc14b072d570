import * as z from "zod/mini";
import { component } from "#shared/domain/schemas";
import { riskLevels } from "#shared/domain/live/projection";

/** GET /vehicle/{vehicleId}/route: the vehicle's live route, projected now (docs/api/execution.md, "Live route and ETAs"). */
const wallClock = (what: string) => z.nullable(z.string()).check(z.describe(`${what}, Y-m-d H:i in the hub's time zone.`));

export const liveStopSchema = z.object({
  visitId: z.string(),
  status: z.string().check(z.describe("The visit's status now (DELETED when it no longer exists).")),
  plannedEta: wallClock("The dispatched arrival"),
  projectedEta: wallClock("Projected arrival of an open stop; the observed arrival of a finished one (when reported); null otherwise"),
  projectedEtd: wallClock("Projected end of service of an open stop; when a finished one finished; null otherwise"),
  slackMinutes: z
    .nullable(z.number())
    .check(
      z.describe(
        "Minutes from the projected service start to the latest allowed one (its window's end; without a window, the shift's end less the service); negative when late. Null unless open.",
      ),
    ),
  risk: z
    .nullable(z.enum(riskLevels))
    .check(z.describe("LATE when slack < 0, AT_RISK when slack < the profile's atRiskMinutes, else ON_TIME. Null unless open.")),
});

export const liveRouteViewSchema = component(
  "LiveRoute",
  z.object({
    vehicleId: z.string(),
    routingResultId: z
      .nullable(z.string())
      .check(z.describe("The result whose dispatch gave the vehicle this route; null when it has none.")),
    stops: z.array(liveStopSchema).check(z.describe("The vehicle's dispatched visits of its current plan, in route order.")),
    currentVisitId: z
      .nullable(z.string())
      .check(z.describe("The stop the vehicle is at or heading to (EN_ROUTE/ARRIVED), else its next open stop; null when none is left.")),
    position: z
      .nullable(z.object({ lat: z.number(), lng: z.number(), at: z.string() }))
      .check(z.describe("The latest position the projection knew of (null without one).")),
    projectedReturn: wallClock("Projected end of the route (back at its end location, or its last service)"),
    overtimeMinutes: z.number().check(z.describe("Minutes the projected end passes the vehicle's shift end (0 when within).")),
    pace: z
      .nullable(z.number())
      .check(z.describe("The day's observed pace: actual ÷ planned travel minutes on reported legs, clamped to 0.8–1.5 (1 without any).")),
  }),
);
