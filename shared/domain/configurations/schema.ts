import * as z from "zod";
import { idSchema, ignoringServerSetKeys, pageQuery, storableNumber } from "#shared/domain/schemas";

/**
 * Configuration profile: what a routing run plans with — the hub (depot and visits), the
 * vehicles, and the optimizer settings. Routing schedules name a profile by `configurationId` and
 * read it at run time, so a change applies from the next run.
 */
export const routingObjectives = ["hierarchical", "distance"] as const;

/** A profile's create/replace is one transaction with a condition check per listed vehicle (DynamoDB allows 100 items). */
export const maxListedVehicles = 95;

const configurationShape = {
  name: z.string().trim().min(1).max(100),
  hubId: z.string().trim().min(1).max(64).describe("An existing hub of the organization (400 otherwise): the depot and the visits of every run."),
  vehicleIds: z
    .array(z.string().trim().min(1).max(64))
    .max(maxListedVehicles)
    .refine((ids) => new Set(ids).size === ids.length, { message: "vehicleIds must be distinct" })
    .describe(
      `Vehicles a run may use; each must be a vehicle of this hub when the profile is written. Empty = every vehicle of the hub at run time. At most ${maxListedVehicles}.`,
    ),
  returnToHub: z.boolean().describe("true: routes end back at the hub; false: a route ends at its last visit."),
  defaultSpeed: storableNumber().min(5).max(200).describe("Average speed in km/h for travel estimates where a vehicle gives none."),
  defaultVisitTime: storableNumber().min(0).max(1440).describe("Service minutes of a visit whose visitTime is null."),
  capacityConstraint: z
    .strictObject({
      weight: z.boolean().default(true).describe("Enforce vehicle weight capacity against visit weight."),
      volume: z.boolean().default(true).describe("Enforce vehicle volume capacity against visit volume."),
    })
    .describe("Which capacity dimensions the optimizer enforces; a dimension that is off is ignored."),
  objective: z
    .enum(routingObjectives)
    .describe("hierarchical: serve the most visits, then use the cheapest vehicles (fixedCost), then the least distance. distance: serve the most visits, then the least distance."),
  timeLimitSeconds: storableNumber().int().min(1).max(240).describe("Optimizer time budget per run, in seconds."),
  roadFactor: storableNumber().min(1).max(3).describe("Road distance ÷ straight-line distance used by the travel estimate."),
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
} as const;

export const configurationInputSchema = ignoringServerSetKeys(
  z.strictObject({
    name: configurationShape.name,
    hubId: configurationShape.hubId,
    vehicleIds: configurationShape.vehicleIds.default([]),
    returnToHub: configurationShape.returnToHub.default(configurationDefaults.returnToHub),
    defaultSpeed: configurationShape.defaultSpeed.default(configurationDefaults.defaultSpeed),
    defaultVisitTime: configurationShape.defaultVisitTime.default(configurationDefaults.defaultVisitTime),
    capacityConstraint: configurationShape.capacityConstraint.default({ ...configurationDefaults.capacityConstraint }),
    objective: configurationShape.objective.default(configurationDefaults.objective),
    timeLimitSeconds: configurationShape.timeLimitSeconds.default(configurationDefaults.timeLimitSeconds),
    roadFactor: configurationShape.roadFactor.default(configurationDefaults.roadFactor),
  }),
);
export type ConfigurationInput = z.infer<typeof configurationInputSchema>;

export const configurationPatchSchema = ignoringServerSetKeys(
  z
    .strictObject(configurationShape)
    .partial()
    .refine((patch) => Object.keys(patch).length > 0, { message: "send at least one field to change" }),
);
export type ConfigurationPatch = z.infer<typeof configurationPatchSchema>;

export const writableConfigurationFields = [
  "name",
  "hubId",
  "vehicleIds",
  "returnToHub",
  "defaultSpeed",
  "defaultVisitTime",
  "capacityConstraint",
  "objective",
  "timeLimitSeconds",
  "roadFactor",
] as const satisfies ReadonlyArray<keyof ConfigurationInput>;

export const configurationSchema = z.object({
  _id: idSchema,
  name: z.string(),
  hubId: z.string(),
  vehicleIds: z.array(z.string()),
  returnToHub: z.boolean(),
  defaultSpeed: z.number(),
  defaultVisitTime: z.number(),
  capacityConstraint: z.object({ weight: z.boolean(), volume: z.boolean() }),
  objective: z.enum(routingObjectives),
  timeLimitSeconds: z.number(),
  roadFactor: z.number(),
  organizationId: z.string(),
  createdTime: z.string().describe("Y-m-d H:i:s, UTC"),
  updatedTime: z.string().describe("Y-m-d H:i:s, UTC"),
});
export type RoutingConfiguration = z.infer<typeof configurationSchema>;

export const configurationParamsSchema = z.strictObject({ configurationId: z.string().min(1).max(64) });

export const configurationListQuerySchema = pageQuery({
  hubId: z.string().min(1).max(64).optional().describe("Profiles of this hub only."),
});
