import * as z from "zod/mini";
import { component, idSchema, ignoringServerSetKeys, writableKeysOf, pageQuery, storableNumber, clientText } from "#shared/domain/schemas";

/**
 * Configuration profile: what a routing run plans with — the hub (depot and visits), the
 * vehicles, and the optimizer settings. Routing schedules name a profile by `configurationId` and
 * read it at run time, so a change applies from the next run.
 */
export const routingObjectives = ["hierarchical", "distance"] as const;
export const travelFallbacks = ["fail", "greatCircle"] as const;
/** What runs on a live day do with still-ASSIGNED visits (shared/domain/runs/live-day.ts, AssignedPolicy). */
export const liveDayAssignedPolicies = ["keepVehicle", "free"] as const;

/** A profile's create/replace is one transaction with a condition check per listed vehicle (DynamoDB allows 100 items). */
export const maxListedVehicles = 95;

const configurationShape = {
  name: z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(100)),
  hubId: z
    .string()
    .check(
      clientText,
      z.trim(),
      z.minLength(1),
      z.maxLength(64),
      z.describe("An existing hub of the organization (400 otherwise): the depot and the visits of every run."),
    ),
  vehicleIds: z.array(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(64))).check(
    z.maxLength(maxListedVehicles),
    z.refine((ids) => new Set(ids).size === ids.length, { message: "vehicleIds must be distinct" }),
    z.describe(
      `Vehicles a run may use; each must be a vehicle of this hub when the profile is written. Empty = every vehicle of the hub at run time. At most ${maxListedVehicles}.`,
    ),
  ),
  returnToHub: z.boolean().check(z.describe("true: routes end back at the hub; false: a route ends at its last visit.")),
  defaultSpeed: storableNumber().check(
    z.minimum(5),
    z.maximum(200),
    z.describe("Average speed in km/h for travel estimates where a vehicle gives none."),
  ),
  defaultVisitTime: storableNumber().check(
    z.minimum(0),
    z.maximum(1440),
    z.describe("Service minutes of a visit whose visitTime is null."),
  ),
  capacityConstraint: z
    .strictObject({
      weight: z._default(z.boolean(), true).check(z.describe("Enforce vehicle weight capacity against visit weight.")),
      volume: z._default(z.boolean(), true).check(z.describe("Enforce vehicle volume capacity against visit volume.")),
    })
    .check(z.describe("Which capacity dimensions the optimizer enforces; a dimension that is off is ignored.")),
  objective: z
    .enum(routingObjectives)
    .check(
      z.describe(
        "hierarchical: serve the most visits, then use the cheapest vehicles (fixedCost), then the least distance. distance: serve the most visits, then the least distance.",
      ),
    ),
  timeLimitSeconds: storableNumber().check(z.int(), z.minimum(1), z.maximum(240), z.describe("Optimizer time budget per run, in seconds.")),
  roadFactor: storableNumber().check(
    z.minimum(1),
    z.maximum(3),
    z.describe("Road distance ÷ straight-line distance used by the great-circle estimate (not by a road-network provider)."),
  ),
  travelProvider: z
    .nullable(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(64)))
    .check(
      z.describe(
        "Name of a travel provider the operator declared (400 listing them otherwise); null: greatCircle, the straight-line estimate. With a road-network provider (osrm, amazonLocation) durations and distances come from the road network: defaultSpeed, a vehicle's speed and roadFactor do not apply.",
      ),
    ),
  travelFallback: z
    .enum(travelFallbacks)
    .check(
      z.describe(
        "When the travel provider fails (after its retries) or the plan's travel elements are used up: fail the run with the reason, or plan with the great-circle estimate; the result's summary.travel says which source was used.",
      ),
    ),
  atRiskMinutes: storableNumber().check(
    z.int(),
    z.minimum(0),
    z.maximum(1440),
    z.describe(
      "Live ETAs: a stop whose projected service start leaves fewer minutes than this before its window closes is AT_RISK (LATE when none). Default 15.",
    ),
  ),
  etaChangeMinutes: storableNumber().check(
    z.int(),
    z.minimum(1),
    z.maximum(1440),
    z.describe(
      "Live ETAs: visit.eta.changed is announced when a stop's projected arrival moved by at least this many minutes. Default 10.",
    ),
  ),
  autoArrival: z
    .boolean()
    .check(
      z.describe(
        "Geofence arrival: two slow position samples within arrivalRadiusMeters of the next stop arrive it (source geofence). Default false.",
      ),
    ),
  arrivalRadiusMeters: storableNumber().check(
    z.int(),
    z.minimum(10),
    z.maximum(5000),
    z.describe("Geofence arrival radius around a stop, metres. Default 75."),
  ),
  liveDayAssigned: z
    .enum(liveDayAssignedPolicies)
    .check(
      z.describe(
        "Scheduled and on-demand runs on a live day (routes dispatched and on the road): keepVehicle pins every still-ASSIGNED visit to its vehicle; free keeps only loaded visits on their vehicle and plans the others as new work (as the re-optimize option `assigned`; a re-optimization takes its own). Default keepVehicle.",
      ),
    ),
  liveDayUseIdleVehicles: z
    .boolean()
    .check(
      z.describe(
        "Scheduled and on-demand runs on a live day: true lets the profile's vehicles with no dispatched route in their shift take work; false plans only vehicles already on the road (as the re-optimize option `useIdleVehicles`). Default true.",
      ),
    ),
};

export const configurationDefaults = {
  vehicleIds: [],
  returnToHub: true,
  defaultSpeed: 25,
  defaultVisitTime: 10,
  capacityConstraint: { weight: true, volume: true },
  objective: "hierarchical",
  timeLimitSeconds: 30,
  roadFactor: 1.3,
  travelProvider: null,
  travelFallback: "fail",
  atRiskMinutes: 15,
  etaChangeMinutes: 10,
  autoArrival: false,
  arrivalRadiusMeters: 75,
  liveDayAssigned: "keepVehicle",
  liveDayUseIdleVehicles: true,
} as const;

const configurationInputBody = z.strictObject({
  name: configurationShape.name,
  hubId: configurationShape.hubId,
  vehicleIds: z._default(configurationShape.vehicleIds, []),
  returnToHub: z._default(configurationShape.returnToHub, configurationDefaults.returnToHub),
  defaultSpeed: z._default(configurationShape.defaultSpeed, configurationDefaults.defaultSpeed),
  defaultVisitTime: z._default(configurationShape.defaultVisitTime, configurationDefaults.defaultVisitTime),
  capacityConstraint: z._default(configurationShape.capacityConstraint, { ...configurationDefaults.capacityConstraint }),
  objective: z._default(configurationShape.objective, configurationDefaults.objective),
  timeLimitSeconds: z._default(configurationShape.timeLimitSeconds, configurationDefaults.timeLimitSeconds),
  roadFactor: z._default(configurationShape.roadFactor, configurationDefaults.roadFactor),
  travelProvider: z._default(configurationShape.travelProvider, configurationDefaults.travelProvider),
  travelFallback: z._default(configurationShape.travelFallback, configurationDefaults.travelFallback),
  atRiskMinutes: z._default(configurationShape.atRiskMinutes, configurationDefaults.atRiskMinutes),
  etaChangeMinutes: z._default(configurationShape.etaChangeMinutes, configurationDefaults.etaChangeMinutes),
  autoArrival: z._default(configurationShape.autoArrival, configurationDefaults.autoArrival),
  arrivalRadiusMeters: z._default(configurationShape.arrivalRadiusMeters, configurationDefaults.arrivalRadiusMeters),
  liveDayAssigned: z._default(configurationShape.liveDayAssigned, configurationDefaults.liveDayAssigned),
  liveDayUseIdleVehicles: z._default(configurationShape.liveDayUseIdleVehicles, configurationDefaults.liveDayUseIdleVehicles),
});
export const configurationInputSchema = ignoringServerSetKeys(configurationInputBody);
export type ConfigurationInput = z.infer<typeof configurationInputSchema>;

const configurationPatchBody = z
  .partial(z.strictObject(configurationShape))
  .check(z.refine((patch) => Object.keys(patch).length > 0, { message: "send at least one field to change" }));
export const configurationPatchSchema = ignoringServerSetKeys(configurationPatchBody);
export type ConfigurationPatch = z.infer<typeof configurationPatchSchema>;

export const writableConfigurationFields = writableKeysOf(configurationInputBody);

export const configurationSchema = z.object({
  _id: idSchema,
  name: z.string().check(clientText),
  hubId: z.string().check(clientText),
  vehicleIds: z.array(z.string().check(clientText)),
  returnToHub: z.boolean(),
  defaultSpeed: z.number(),
  defaultVisitTime: z.number(),
  capacityConstraint: z.object({ weight: z.boolean(), volume: z.boolean() }),
  objective: z.enum(routingObjectives),
  timeLimitSeconds: z.number(),
  roadFactor: z.number(),
  // Profiles stored before travel providers existed read as the great-circle estimate.
  travelProvider: z._default(z.nullable(z.string().check(clientText)), null),
  travelFallback: z._default(z.enum(travelFallbacks), "fail"),
  // Profiles stored before live ETAs read with the documented defaults.
  atRiskMinutes: z._default(z.number(), configurationDefaults.atRiskMinutes),
  etaChangeMinutes: z._default(z.number(), configurationDefaults.etaChangeMinutes),
  autoArrival: z._default(z.boolean(), configurationDefaults.autoArrival),
  arrivalRadiusMeters: z._default(z.number(), configurationDefaults.arrivalRadiusMeters),
  // Profiles stored before live-day settings read as runs behaved then.
  liveDayAssigned: z._default(z.enum(liveDayAssignedPolicies), configurationDefaults.liveDayAssigned),
  liveDayUseIdleVehicles: z._default(z.boolean(), configurationDefaults.liveDayUseIdleVehicles),
  organizationId: z.string().check(clientText),
  createdTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
  updatedTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
});
export type RoutingConfiguration = z.infer<typeof configurationSchema>;

export const configurationParamsSchema = z.strictObject({ configurationId: z.string().check(clientText, z.minLength(1), z.maxLength(64)) });

export const configurationListQuerySchema = pageQuery({
  hubId: z.optional(z.string().check(clientText, z.minLength(1), z.maxLength(64))).check(z.describe("Profiles of this hub only.")),
});

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("RoutingConfiguration", configurationSchema);
component("RoutingConfigurationInput", configurationInputSchema);
component("RoutingConfigurationPatch", configurationPatchSchema);
