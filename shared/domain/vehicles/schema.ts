import * as z from "zod/mini";
import {
  component,
  idSchema,
  ignoringServerSetKeys,
  writableKeysOf,
  minutesOfDay,
  pageQuery,
  storableNumber,
  timeOfDaySchema,
  clientText,
} from "#shared/domain/schemas";
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
    min: z.optional(storableNumber().check(z.minimum(0))).check(z.describe("Soft minimum load the optimizer tries to reach.")),
    max: z.optional(storableNumber().check(z.minimum(0))).check(z.describe("Hard maximum load.")),
  })
  .check(
    z.refine((range) => range.min === undefined || range.max === undefined || range.min <= range.max, {
      message: "min must not exceed max",
      path: ["min"],
    }),
  );

const workingTimeSchema = z.strictObject({
  startTime: timeOfDaySchema,
  endTime: timeOfDaySchema,
  multiday: z
    ._default(storableNumber().check(z.int(), z.minimum(0), z.maximum(7)), 0)
    .check(z.describe("Extra days a shift spans (0 = ends the day it starts).")),
});

const breakTimeSchema = z.strictObject({ startTime: timeOfDaySchema, endTime: timeOfDaySchema });

const tagSchema = z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(50));

const positive = storableNumber().check(z.positive());

/** Every writable field. PUT/POST take it whole (with defaults); PATCH takes any subset, merged then re-validated. */
const vehicleShape = {
  name: z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(100)),
  type: z.enum(vehicleTypes),
  plateNumber: z.nullable(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(20))),
  hubId: z
    .string()
    .check(
      clientText,
      z.trim(),
      z.minLength(1),
      z.maxLength(64),
      z.describe("An existing hub of the organization (400 naming hubId otherwise); a hub cannot be deleted while a vehicle names it."),
    ),
  assignee: z
    .nullable(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(128)))
    .check(z.describe("User id of the driver (a token subject: up to 128 characters).")),
  capacity: z.strictObject({ weight: z.optional(capacityRangeSchema), volume: z.optional(capacityRangeSchema) }),
  speed: storableNumber().check(z.minimum(5), z.maximum(200), z.describe("Average speed in km/h.")),
  workingTime: workingTimeSchema,
  breakTime: z.nullable(breakTimeSchema),
  tags: z.array(tagSchema).check(
    z.maxLength(10),
    z.refine((tags) => new Set(tags).size === tags.length, { message: "tags must be distinct" }),
    z.describe("A vehicle serves a visit only if its tags include all of the visit's tags."),
  ),
  fixedCost: storableNumber().check(
    z.minimum(0),
    z.maximum(100),
    z.describe("Cost of using this vehicle at all (0–100): lower is preferred."),
  ),
  startLocation: z
    .nullable(coordinateSchema)
    .check(z.describe("Where the vehicle's route starts (e.g. the driver's home); null = the hub. Same forms as a visit coordinate.")),
  endLocation: z
    .nullable(coordinateSchema)
    .check(
      z.describe(
        "Where the vehicle's route ends; null = the hub (or, when the profile does not return to the hub, the last visit). Set, the route always ends here.",
      ),
    ),
  constraints: z.strictObject({
    maxVisits: z.optional(positive.check(z.int())).check(z.describe("Most visits on one route.")),
    maxDistanceKm: z.optional(positive),
    maxDurationMinutes: z.optional(positive),
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

type ScheduleFields = { workingTime: z.infer<typeof workingTimeSchema>; breakTime: z.infer<typeof breakTimeSchema> | null };

/** Rules that span several fields; applied to the complete (merged) vehicle. */
function checkSchedule(vehicle: ScheduleFields, ctx: z.core.$RefinementCtx<ScheduleFields>) {
  const start = minutesOfDay(vehicle.workingTime.startTime);
  let end = minutesOfDay(vehicle.workingTime.endTime) + vehicle.workingTime.multiday * 1440;
  if (end <= start) {
    if (vehicle.workingTime.multiday === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["workingTime", "endTime"],
        message: "endTime must be after startTime (set multiday for shifts past midnight)",
      });
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

const vehicleInputBody = z
  .strictObject({
    name: vehicleShape.name,
    hubId: vehicleShape.hubId,
    type: z._default(vehicleShape.type, vehicleDefaults.type),
    plateNumber: z._default(vehicleShape.plateNumber, vehicleDefaults.plateNumber),
    assignee: z._default(vehicleShape.assignee, vehicleDefaults.assignee),
    capacity: z._default(vehicleShape.capacity, {}),
    speed: z._default(vehicleShape.speed, vehicleDefaults.speed),
    workingTime: z._default(vehicleShape.workingTime, { ...vehicleDefaults.workingTime }),
    breakTime: z._default(vehicleShape.breakTime, vehicleDefaults.breakTime),
    tags: z._default(vehicleShape.tags, []),
    fixedCost: z._default(vehicleShape.fixedCost, vehicleDefaults.fixedCost),
    startLocation: z._default(vehicleShape.startLocation, vehicleDefaults.startLocation),
    endLocation: z._default(vehicleShape.endLocation, vehicleDefaults.endLocation),
    constraints: z._default(vehicleShape.constraints, {}),
    custom: z
      .optional(customValuesSchema)
      .check(
        z.describe(
          "Custom values of the organization's vehicle extension data type (docs/api/extensions.md). POST: absent = {} (defaults apply, required fields must be sent). PUT: absent keeps the stored values; present replaces them all (omitted hidden fields keep theirs).",
        ),
      ),
  })
  .check(z.superRefine(checkSchedule, { when: whenFieldsParsed(["workingTime", "breakTime"]) }));
/** POST and PUT: the whole vehicle; server-set keys (`_id`, `organizationId`, times) are ignored when sent. */
export const vehicleInputSchema = ignoringServerSetKeys(vehicleInputBody);
/** The fields a PATCH merges over the stored vehicle (custom values merge their own way). */
export const writableVehicleFields = writableKeysOf(vehicleInputBody, ["custom"]);

export type VehicleInput = z.infer<typeof vehicleInputSchema>;

const vehiclePatchBody = z
  .partial(
    z.strictObject({
      ...vehicleShape,
      custom: customValuesSchema.check(
        z.describe(
          "Keys sent replace the stored custom values (null clears one); the merged custom values are checked as a whole. Absent: unchanged.",
        ),
      ),
    }),
  )
  .check(z.refine((patch) => Object.keys(patch).length > 0, { message: "send at least one field to change" }));
/** PATCH: any subset of the writable fields; top-level fields replace the stored ones (nested objects whole). */
export const vehiclePatchSchema = ignoringServerSetKeys(vehiclePatchBody);

export type VehiclePatch = z.infer<typeof vehiclePatchSchema>;

export const vehicleSchema = z.object({
  _id: idSchema,
  name: z.string().check(clientText),
  type: z.enum(vehicleTypes),
  plateNumber: z.nullable(z.string().check(clientText)),
  hubId: z.string().check(clientText),
  assignee: z.nullable(z.string().check(clientText)),
  capacity: vehicleShape.capacity,
  speed: z.number(),
  workingTime: workingTimeSchema,
  breakTime: z.nullable(breakTimeSchema),
  tags: z.array(z.string().check(clientText)),
  fixedCost: z.number(),
  /** Vehicles stored before these existed read as null (the hub). */
  startLocation: z._default(z.nullable(z.object({ lat: z.number(), lng: z.number() })), null),
  endLocation: z._default(z.nullable(z.object({ lat: z.number(), lng: z.number() })), null),
  constraints: vehicleShape.constraints,
  organizationId: z.string().check(clientText),
  createdTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
  updatedTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
});

export type Vehicle = z.infer<typeof vehicleSchema>;

/** A vehicle as answered: the stored vehicle and its visible custom values. */
export const vehicleViewSchema = z.extend(vehicleSchema, { custom: customValuesViewSchema });
export type VehicleView = z.infer<typeof vehicleViewSchema>;

export const vehicleParamsSchema = z.strictObject({ vehicleId: z.string().check(clientText, z.minLength(1), z.maxLength(64)) });

export const vehicleListQuerySchema = pageQuery({
  hubId: z.optional(z.string().check(clientText, z.minLength(1), z.maxLength(64))),
  tag: z.optional(z.string().check(clientText, z.minLength(1), z.maxLength(50))),
});

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("Vehicle", vehicleViewSchema);
component("VehicleInput", vehicleInputSchema);
component("VehiclePatch", vehiclePatchSchema);
