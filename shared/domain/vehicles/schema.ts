import * as z from "zod";
import { idSchema, ignoringServerSetKeys, minutesOfDay, pageQuery, storableNumber, timeOfDaySchema } from "#shared/domain/schemas";
import { whenFieldsParsed } from "#shared/domain/validation";
import { coordinateSchema } from "#shared/domain/coordinates";
import { customValuesSchema, customValuesViewSchema } from "#shared/domain/extensions/schema";

/**
 * Vehicle model. The spec names only the attribute groups (identifiers, capacity, speed, working
 * hours, tags, constraints); the fields below are this API's decision, documented in the OpenAPI.
 */
export const vehicleTypes = ["car", "bike", "truck", "other"] as const;

const capacityRangeSchema = z
  .strictObject({
    min: storableNumber().min(0).optional().describe("Soft minimum load the optimizer tries to reach."),
    max: storableNumber().min(0).optional().describe("Hard maximum load."),
  })
  .refine((range) => range.min === undefined || range.max === undefined || range.min <= range.max, {
    message: "min must not exceed max",
    path: ["min"],
  });

const workingTimeSchema = z.strictObject({
  startTime: timeOfDaySchema,
  endTime: timeOfDaySchema,
  multiday: storableNumber().int().min(0).max(7).default(0).describe("Extra days a shift spans (0 = ends the day it starts)."),
});

const breakTimeSchema = z.strictObject({ startTime: timeOfDaySchema, endTime: timeOfDaySchema });

const tagSchema = z.string().trim().min(1).max(50);

const positive = storableNumber().positive();

/** Every writable field. PUT/POST take it whole (with defaults); PATCH takes any subset, merged then re-validated. */
const vehicleShape = {
  name: z.string().trim().min(1).max(100),
  type: z.enum(vehicleTypes),
  plateNumber: z.string().trim().min(1).max(20).nullable(),
  hubId: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .describe("An existing hub of the organization (400 naming hubId otherwise); a hub cannot be deleted while a vehicle names it."),
  assignee: z.string().trim().min(1).max(64).nullable().describe("User id of the driver."),
  capacity: z.strictObject({ weight: capacityRangeSchema.optional(), volume: capacityRangeSchema.optional() }),
  speed: storableNumber().min(5).max(200).describe("Average speed in km/h."),
  workingTime: workingTimeSchema,
  breakTime: breakTimeSchema.nullable(),
  tags: z
    .array(tagSchema)
    .max(10)
    .refine((tags) => new Set(tags).size === tags.length, { message: "tags must be distinct" })
    .describe("A vehicle serves a visit only if its tags include all of the visit's tags."),
  fixedCost: storableNumber().min(0).max(100).describe("Cost of using this vehicle at all (0–100): lower is preferred."),
  startLocation: coordinateSchema
    .nullable()
    .describe("Where the vehicle's route starts (e.g. the driver's home); null = the hub. Same forms as a visit coordinate."),
  endLocation: coordinateSchema
    .nullable()
    .describe("Where the vehicle's route ends; null = the hub (or, when the profile does not return to the hub, the last visit). Set, the route always ends here."),
  constraints: z.strictObject({
    maxVisits: positive.int().optional().describe("Most visits on one route."),
    maxDistanceKm: positive.optional(),
    maxDurationMinutes: positive.optional(),
  }),
};

export const vehicleDefaults = {
  type: "car",
  plateNumber: null,
  assignee: null,
  capacity: {},
  speed: 25,
  workingTime: { startTime: "08:00", endTime: "17:00", multiday: 0 },
  breakTime: null,
  tags: [],
  fixedCost: 0,
  startLocation: null,
  endLocation: null,
  constraints: {},
} as const;

/** Rules that span several fields; applied to the complete (merged) vehicle. */
function checkSchedule(vehicle: { workingTime: z.infer<typeof workingTimeSchema>; breakTime: z.infer<typeof breakTimeSchema> | null }, ctx: z.RefinementCtx) {
  const start = minutesOfDay(vehicle.workingTime.startTime);
  let end = minutesOfDay(vehicle.workingTime.endTime) + vehicle.workingTime.multiday * 1440;
  if (end <= start) {
    if (vehicle.workingTime.multiday === 0) {
      ctx.addIssue({ code: "custom", path: ["workingTime", "endTime"], message: "endTime must be after startTime (set multiday for shifts past midnight)" });
      return;
    }
    end += 1440;
  }
  if (!vehicle.breakTime) return;
  // Place the break on the shift's timeline: a break clock time earlier than the shift start belongs to the next day.
  const rawBreakStart = minutesOfDay(vehicle.breakTime.startTime);
  const breakStart = rawBreakStart >= start ? rawBreakStart : rawBreakStart + 1440;
  const rawBreakEnd = minutesOfDay(vehicle.breakTime.endTime);
  const breakEnd = breakStart + ((rawBreakEnd - rawBreakStart + 1440) % 1440);
  if (breakEnd <= breakStart) {
    ctx.addIssue({ code: "custom", path: ["breakTime", "endTime"], message: "breakTime endTime must be after its startTime" });
  } else if (breakEnd > end) {
    ctx.addIssue({ code: "custom", path: ["breakTime"], message: "breakTime must lie inside workingTime" });
  }
}

/** POST and PUT: the whole vehicle; server-set keys (`_id`, `organizationId`, times) are ignored when sent. */
export const vehicleInputSchema = ignoringServerSetKeys(
  z
    .strictObject({
      name: vehicleShape.name,
      hubId: vehicleShape.hubId,
      type: vehicleShape.type.default(vehicleDefaults.type),
      plateNumber: vehicleShape.plateNumber.default(vehicleDefaults.plateNumber),
      assignee: vehicleShape.assignee.default(vehicleDefaults.assignee),
      capacity: vehicleShape.capacity.default({}),
      speed: vehicleShape.speed.default(vehicleDefaults.speed),
      workingTime: vehicleShape.workingTime.default({ ...vehicleDefaults.workingTime }),
      breakTime: vehicleShape.breakTime.default(vehicleDefaults.breakTime),
      tags: vehicleShape.tags.default([]),
      fixedCost: vehicleShape.fixedCost.default(vehicleDefaults.fixedCost),
      startLocation: vehicleShape.startLocation.default(vehicleDefaults.startLocation),
      endLocation: vehicleShape.endLocation.default(vehicleDefaults.endLocation),
      constraints: vehicleShape.constraints.default({}),
      custom: customValuesSchema
        .optional()
        .describe(
          "Custom values of the organization's vehicle extension data type (docs/extensions.md). POST: absent = {} (defaults apply, required fields must be sent). PUT: absent keeps the stored values; present replaces them all (omitted hidden fields keep theirs).",
        ),
    })
    .superRefine(checkSchedule, { when: whenFieldsParsed(["workingTime", "breakTime"]) }),
);

export type VehicleInput = z.infer<typeof vehicleInputSchema>;

/** PATCH: any subset of the writable fields; top-level fields replace the stored ones (nested objects whole). */
export const vehiclePatchSchema = ignoringServerSetKeys(
  z
    .strictObject({
      ...vehicleShape,
      custom: customValuesSchema.describe("Keys sent replace the stored custom values (null clears one); the merged custom values are checked as a whole. Absent: unchanged."),
    })
    .partial()
    .refine((patch) => Object.keys(patch).length > 0, { message: "send at least one field to change" }),
);

export type VehiclePatch = z.infer<typeof vehiclePatchSchema>;

export const vehicleSchema = z.object({
  _id: idSchema,
  name: z.string(),
  type: z.enum(vehicleTypes),
  plateNumber: z.string().nullable(),
  hubId: z.string(),
  assignee: z.string().nullable(),
  capacity: vehicleShape.capacity,
  speed: z.number(),
  workingTime: workingTimeSchema,
  breakTime: breakTimeSchema.nullable(),
  tags: z.array(z.string()),
  fixedCost: z.number(),
  /** Vehicles stored before these existed read as null (the hub). */
  startLocation: z.object({ lat: z.number(), lng: z.number() }).nullable().default(null),
  endLocation: z.object({ lat: z.number(), lng: z.number() }).nullable().default(null),
  constraints: vehicleShape.constraints,
  organizationId: z.string(),
  createdTime: z.string().describe("Y-m-d H:i:s, UTC"),
  updatedTime: z.string().describe("Y-m-d H:i:s, UTC"),
});

export type Vehicle = z.infer<typeof vehicleSchema>;

/** A vehicle as answered: the stored vehicle and its visible custom values. */
export const vehicleViewSchema = vehicleSchema.extend({ custom: customValuesViewSchema });
export type VehicleView = z.infer<typeof vehicleViewSchema>;

export const vehicleParamsSchema = z.strictObject({ vehicleId: z.string().min(1).max(64) });

export const vehicleListQuerySchema = pageQuery({
  hubId: z.string().min(1).max(64).optional(),
  tag: z.string().min(1).max(50).optional(),
});
