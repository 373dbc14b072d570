import * as z from "zod/mini";
import {
  component,
  idSchema,
  ignoringServerSetKeys,
  writableKeysOf,
  pageQuery,
  storableNumber,
  timeOfDaySchema,
  clientText,
} from "#shared/domain/schemas";
import { whenFieldsParsed } from "#shared/domain/validation";
import { effectiveFrequency, frequencies, parseCivilDate, parseWallClock, periodes, weekdays } from "#shared/domain/schedules/timetable";

/**
 * Routing schedule model. The spec lists the attributes; everything it leaves open (the name, value
 * types and ranges of frequency/interval, `active`, limits) is this API's decision, documented in the
 * `.describe()`s below, the route descriptions and docs/api/routing-schedules.md.
 */
export const MAX_RUN_TIMES = 100;

const distinct = (values: readonly string[]) => new Set(values).size === values.length;

const wallClockSchema = z.string().check(
  clientText,
  z.regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/, { message: "must be a date and time Y-m-d H:i, e.g. 2026-12-01 07:00", abort: true }),
  z.refine((value) => parseWallClock(value) !== undefined, { message: "must be a real calendar date and time, e.g. 2026-12-01 07:00" }),
);

const scheduleEntrySchema = z
  .strictObject({
    day: z.optional(z.enum(weekdays)).check(z.describe("weekly entries (and custom with frequency weekly): weekday, lower case.")),
    date: z
      .optional(z.string().check(clientText))
      .check(
        z.describe(
          "monthly entries: day of month, exactly two digits `01`–`31` (past the month's end runs on its last day); byDate entries: `Y-m-d`.",
        ),
      ),
    time: z
      .array(timeOfDaySchema)
      .check(
        z.minLength(1, { message: "list at least one time" }),
        z.maxLength(MAX_RUN_TIMES),
        z.refine(distinct, { message: "times must be distinct within an entry" }),
        z.describe("Run times `HH:mm` (00:00–23:59) in the application time zone."),
      ),
  })
  .check(
    z.describe(
      'Entry shape by periode: daily `{ time }`, weekly `{ day, time }`, monthly `{ date: "05", time }`, byDate `{ date: "2026-12-01", time }`, custom like its frequency.',
    ),
  );

export type ScheduleEntryInput = z.infer<typeof scheduleEntrySchema>;

/** Every writable field. */
const scheduleShape = {
  name: z
    .nullable(z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(100)))
    .check(
      z.describe(
        "Used to name the routing results of runs: `{name} - {Y-m-d H:i}`. Optional (the spec has no name attribute): null or absent takes the configuration profile's name when the schedule is written.",
      ),
    ),
  configurationId: z
    .string()
    .check(
      clientText,
      z.trim(),
      z.minLength(1),
      z.maxLength(64),
      z.describe(
        "Configuration profile the runs read (it supplies the hub and the vehicles): must name a profile of the organization, on a hub the token allows, when set or changed (400 otherwise); read at run time. A token with hubIds sees only schedules whose profile is on one of its hubs.",
      ),
    ),
  periode: z.enum(periodes),
  schedules: z.array(scheduleEntrySchema).check(z.minLength(1, { message: "list at least one entry" }), z.maxLength(MAX_RUN_TIMES)),
  startTime: z
    .nullable(wallClockSchema)
    .check(
      z.describe(
        "Start of the active window, `Y-m-d H:i`, application time zone, inclusive. Required except for byDate, whose dates are absolute: there a sent value is accepted and ignored (stored and answered as null).",
      ),
    ),
  endTime: z
    .nullable(wallClockSchema)
    .check(
      z.describe(
        "End of the active window, `Y-m-d H:i`, inclusive, after startTime. Required except for byDate, whose dates are absolute: there a sent value is accepted and ignored (stored and answered as null).",
      ),
    ),
  frequency: z
    .nullable(z.enum(frequencies))
    .check(
      z.describe(
        "custom only (required there): the entry shape and the unit the interval counts. With another periode a sent value is accepted and ignored (stored and answered as null).",
      ),
    ),
  interval: z
    .nullable(storableNumber().check(z.int(), z.minimum(1), z.maximum(99)))
    .check(
      z.describe(
        "custom only (required there): run every interval-th day / ISO week (Monday) / calendar month, counted from the one containing startTime. With another periode a sent value is accepted and ignored (stored and answered as null).",
      ),
    ),
  autoDispatch: z.boolean().check(z.describe("When true, a run dispatches every vehicle of the result it creates.")),
  active: z.boolean().check(z.describe("false pauses the schedule (no runs, no nextRunTime) without deleting it.")),
};

/** Server-set fields a schedule answers besides the common ones (serverSetKeys): ignored when sent, never stored. */
const scheduleServerSetKeys = ["timeSchedules", "nextRunTime", "timeZone", "logExecuted"];

interface TimetableFields {
  periode: (typeof periodes)[number];
  schedules: ScheduleEntryInput[];
  startTime: string | null;
  endTime: string | null;
  frequency: (typeof frequencies)[number] | null;
  interval: number | null;
}

const MONTH_DAY = /^(0[1-9]|[12]\d|3[01])$/;

/** Rules that span fields: which fields the periode needs, the entry shape, repeats, the window, the 100-run limit. */
function checkTimetable(schedule: TimetableFields, ctx: z.core.$RefinementCtx<TimetableFields>) {
  const issue = (path: Array<string | number>, message: string) => ctx.addIssue({ code: "custom", path, message });
  const { periode } = schedule;

  // byDate dates are absolute: a sent window is not used (withoutUnusedFields stores null).
  if (periode !== "byDate") {
    if (schedule.startTime === null) issue(["startTime"], `is required for periode ${periode}`);
    if (schedule.endTime === null) issue(["endTime"], `is required for periode ${periode}`);
    if (schedule.startTime !== null && schedule.endTime !== null && schedule.startTime >= schedule.endTime) {
      issue(["endTime"], "must be after startTime");
    }
  }

  // frequency/interval are used only with custom; elsewhere a sent value is not used (withoutUnusedFields stores null).
  if (periode === "custom") {
    if (schedule.frequency === null) issue(["frequency"], "is required for periode custom (daily, weekly or monthly)");
    if (schedule.interval === null) issue(["interval"], "is required for periode custom (an integer 1–99)");
  }

  const totalRunTimes = schedule.schedules.reduce((sum, entry) => sum + entry.time.length, 0);
  if (totalRunTimes > MAX_RUN_TIMES) issue(["schedules"], `may list at most ${MAX_RUN_TIMES} run times in total (${totalRunTimes} listed)`);

  const shape = effectiveFrequency({ periode, frequency: schedule.frequency });
  if (!shape) return;
  const seenKeys = new Set<string>();
  const seenDailyTimes = new Set<string>();
  const checkEntry = (entry: (typeof schedule.schedules)[number], index: number) => {
    const at = (field: string) => ["schedules", index, field];
    const notUsed = (field: "day" | "date") => {
      if (entry[field] !== undefined) issue(at(field), `is not used in ${shape} entries`);
    };
    switch (shape) {
      case "daily":
        notUsed("day");
        notUsed("date");
        // Daily entries have no key of their own; their times together form one daily timetable.
        for (const time of entry.time) {
          if (seenDailyTimes.has(time)) issue(at("time"), `time ${time} is listed in more than one entry`);
          seenDailyTimes.add(time);
        }
        return;
      case "weekly":
        notUsed("date");
        if (entry.day === undefined) return issue(at("day"), "is required in weekly entries (monday … sunday)");
        if (seenKeys.has(entry.day)) return issue(at("day"), `day ${entry.day} is listed twice`);
        seenKeys.add(entry.day);
        return;
      case "monthly":
        notUsed("day");
        if (entry.date === undefined) return issue(at("date"), "is required in monthly entries (day of month 01–31)");
        if (!MONTH_DAY.test(entry.date)) return issue(at("date"), "must be a day of month as exactly two digits, 01–31");
        if (seenKeys.has(entry.date)) return issue(at("date"), `date ${entry.date} is listed twice`);
        seenKeys.add(entry.date);
        return;
      case "byDate":
        notUsed("day");
        if (entry.date === undefined) return issue(at("date"), "is required in byDate entries (Y-m-d)");
        if (!parseCivilDate(entry.date)) return issue(at("date"), "must be a real date Y-m-d, e.g. 2026-12-01");
        if (seenKeys.has(entry.date)) return issue(at("date"), `date ${entry.date} is listed twice`);
        seenKeys.add(entry.date);
        return;
    }
  };
  for (const [index, entry] of schedule.schedules.entries()) checkEntry(entry, index);
}

/**
 * Liberal in what is accepted, strict in what is stored: the spec says byDate takes no active
 * window ("not used, dates are absolute") and frequency/interval are "used with custom", so a form
 * that always sends them is accepted and the unused values are stored as null.
 */
function withoutUnusedFields<T extends TimetableFields>(schedule: T): T {
  return {
    ...schedule,
    ...(schedule.periode === "byDate" ? { startTime: null, endTime: null } : {}),
    ...(schedule.periode === "custom" ? {} : { frequency: null, interval: null }),
  };
}

const scheduleInputObject = z.strictObject({
  name: z._default(scheduleShape.name, null),
  configurationId: scheduleShape.configurationId,
  periode: scheduleShape.periode,
  schedules: scheduleShape.schedules,
  startTime: z._default(scheduleShape.startTime, null),
  endTime: z._default(scheduleShape.endTime, null),
  frequency: z._default(scheduleShape.frequency, null),
  interval: z._default(scheduleShape.interval, null),
  autoDispatch: z._default(scheduleShape.autoDispatch, false),
  active: z._default(scheduleShape.active, true),
});
/** The fields a PATCH merges over the stored schedule. */
export const writableScheduleFields = writableKeysOf(scheduleInputObject);

const scheduleInputBody = z.pipe(
  scheduleInputObject.check(
    z.superRefine(checkTimetable, { when: whenFieldsParsed(["periode", "schedules", "startTime", "endTime", "frequency", "interval"]) }),
  ),
  z.transform(withoutUnusedFields),
);
/** POST and PUT body (PUT is a full replace: omitted optional fields take these defaults). */
export const scheduleInputSchema = ignoringServerSetKeys(scheduleInputBody, scheduleServerSetKeys);

export type ScheduleInput = z.output<typeof scheduleInputSchema>;

const schedulePatchBody = z.partial(z.strictObject(scheduleShape)).check(
  z.refine((patch) => writableScheduleFields.some((field) => patch[field] !== undefined), {
    message: "send at least one writable field to change",
  }),
);
/** PATCH body: any subset of the writable fields; merged over the stored schedule, then validated whole. */
export const schedulePatchSchema = ignoringServerSetKeys(schedulePatchBody, scheduleServerSetKeys);

export type SchedulePatch = z.output<typeof schedulePatchSchema>;

export const logExecutedSchema = z
  .object({
    status: z.enum(["SUCCESS", "SKIPPED", "FAILED"]).check(z.describe("Outcome of the last run.")),
    message: z
      .string()
      .check(
        clientText,
        z.describe(
          "What happened: the result summary, or why the run was skipped or failed (a failure on the last attempt says the run message moved to the dead-letter queue).",
        ),
      ),
    routingResultId: z.nullable(z.string().check(clientText)).check(z.describe("The routing result the run produced; null when none.")),
    dispatched: z
      .nullable(z.object({ success: z.number().check(z.int()), failed: z.number().check(z.int()) }))
      .check(z.describe("Visits assigned / not assigned (no longer active) by autoDispatch; null when the run did not dispatch.")),
    lastExecute: z.string().check(clientText, z.describe("When the outcome was recorded, Y-m-d H:i:s UTC.")),
  })
  .check(
    z.describe("Outcome of the last run; absent until the first run. Written by the scheduler (tick and run worker), never by clients."),
  );

const storedEntrySchema = z.object({
  day: z.optional(z.enum(weekdays)),
  date: z.optional(z.string().check(clientText)),
  time: z.array(z.string().check(clientText)),
});

/** The fields every stored schedule and every response carry. */
const scheduleCommonShape = {
  _id: idSchema,
  name: z.string().check(clientText),
  configurationId: z.string().check(clientText),
  periode: z.enum(periodes),
  schedules: z.array(storedEntrySchema),
  startTime: z.nullable(z.string().check(clientText)),
  endTime: z.nullable(z.string().check(clientText)),
  frequency: z.nullable(z.enum(frequencies)),
  interval: z.nullable(z.number().check(z.int())),
  autoDispatch: z.boolean(),
  active: z.boolean(),
  timeSchedules: z
    .array(z.string().check(clientText))
    .check(
      z.describe(
        'Derived timetable, sorted: daily "07:00", weekly "monday 07:00", monthly "05 07:00", byDate "2026-12-01 07:00", custom like its frequency.',
      ),
    ),
};

const auditShape = {
  logExecuted: z.optional(logExecutedSchema),
  organizationId: z.string().check(clientText),
  createdBy: z.string().check(clientText, z.describe("User id of the creator.")),
  createdTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
  updatedTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
};

/** A schedule as stored: `nextRunAt` is the instant (ISO 8601 UTC) of the next run, null when none is left. */
export const scheduleRecordSchema = z.object({
  ...scheduleCommonShape,
  nextRunAt: z.nullable(z.string().check(clientText)),
  ...auditShape,
});

export type ScheduleRecord = z.infer<typeof scheduleRecordSchema>;

/** A schedule as answered. */
export const scheduleSchema = z.object({
  ...scheduleCommonShape,
  nextRunTime: z
    .nullable(z.string().check(clientText))
    .check(z.describe("Next run, `Y-m-d H:i` in `timeZone`; null when paused or no run is left.")),
  timeZone: z
    .string()
    .check(
      z.describe(
        "The IANA time zone the schedule's times, dates and nextRunTime are read in: the application's (APP_TIMEZONE), the same for every schedule.",
      ),
    ),
  ...auditShape,
});

export type RoutingSchedule = z.infer<typeof scheduleSchema>;

export const scheduleParamsSchema = z.strictObject({ scheduleId: z.string().check(clientText, z.minLength(1), z.maxLength(64)) });

export const scheduleListQuerySchema = pageQuery({
  hubId: z
    .optional(z.string().check(clientText, z.minLength(1), z.maxLength(64)))
    .check(z.describe("Schedules whose configuration profile belongs to this hub (resolved through configuration profiles).")),
  configurationId: z
    .optional(z.string().check(clientText, z.minLength(1), z.maxLength(64)))
    .check(z.describe("Schedules of this configuration profile.")),
});

export type ScheduleListQuery = z.infer<typeof scheduleListQuerySchema>;

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("RoutingSchedule", scheduleSchema);
component("RoutingScheduleInput", scheduleInputSchema);
component("RoutingSchedulePatch", schedulePatchSchema);
