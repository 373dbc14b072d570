import * as z from "zod/mini";
import { pageBodySchema, successBodySchema, clientText } from "#shared/domain/schemas";
import {
  scheduleInputSchema,
  scheduleListQuerySchema,
  scheduleParamsSchema,
  schedulePatchSchema,
  scheduleSchema,
} from "#shared/domain/schedules/schema";
import { defineRoute } from "#shared/http/route";

const scheduleBody = () => successBodySchema(scheduleSchema);
const tag = "Routing schedules";

const bodyRules = [
  'Entries in `schedules` follow `periode`: daily `{ time }`, weekly `{ day: monday…sunday, time }`, monthly `{ date: "01"…"31", time }`, byDate `{ date: "Y-m-d", time }`, custom like its `frequency`.',
  "Times are `HH:mm` (00:00–23:59), distinct within an entry (and across daily entries); at least one entry; no day or date listed twice; at most 100 run times in total.",
  "daily, weekly, monthly and custom need the active window `startTime`/`endTime` (`Y-m-d H:i`, start before end, both inclusive); byDate dates are absolute, so a window sent with byDate is accepted and ignored (stored and answered as null). custom also needs `frequency` (daily|weekly|monthly) and `interval` (1–99); with another periode they are accepted and ignored (stored and answered as null).",
  "`name` is optional (the spec has none; it names run results `{name} - {Y-m-d H:i}`): null or absent takes the configuration profile's name when the schedule is written.",
  "All wall-clock values are read in the application time zone. A time skipped by a daylight-saving change runs at the first minute after the gap; a repeated time runs once (first occurrence); a monthly date past the month's end runs on its last day; custom intervals count days / ISO weeks (Monday) / calendar months from the one containing startTime; byDate dates in the past never run.",
  "`_id`, `timeSchedules`, `nextRunTime`, `logExecuted`, `organizationId`, `createdBy`, `createdTime` and `updatedTime` are server-set: sent values are ignored, never stored (any other unknown key is a 400).",
  "The stored next run (due index) is recomputed from the time of the write; `active: false` pauses the schedule (no next run) without deleting it.",
].join("\n\n");

export const scheduleRoutes = {
  create: defineRoute({
    operationId: "createRoutingSchedule",
    method: "POST",
    path: "/routing/schedule",
    handler: "functions/http/routing-schedules/create.ts",
    summary: "Create a routing schedule",
    description: `${bodyRules}\n\n\`configurationId\` must name an existing configuration profile of the organization on a hub the token allows; otherwise 400 naming \`configurationId\`.`,
    tag,
    permission: "add/routing-schedule",
    body: scheduleInputSchema,
    responses: () => ({ 201: { description: "Created", schema: scheduleBody() } }),
    grants: ["tableWrite"],
    idempotent: true,
  }),
  list: defineRoute({
    operationId: "listRoutingSchedules",
    method: "GET",
    path: "/routing/schedules",
    handler: "functions/http/routing-schedules/list.ts",
    summary: "List routing schedules",
    description: [
      "Every schedule of the caller's organization, oldest first, or filtered by `configurationId` and/or `hubId`.",
      "Schedules carry no hub (their configuration profile supplies it), so `hubId` selects the schedules of that hub's configuration profiles. A `hubId` the token does not allow is a 400.",
    ].join("\n\n"),
    tag,
    permission: "view/routing-schedule",
    query: scheduleListQuerySchema,
    responses: () => ({ 200: { description: "A page of routing schedules", schema: pageBodySchema(scheduleSchema) } }),
    grants: ["tableRead"],
  }),
  get: defineRoute({
    operationId: "getRoutingSchedule",
    method: "GET",
    path: "/routing/schedule/{scheduleId}",
    handler: "functions/http/routing-schedules/get.ts",
    summary: "Read a routing schedule",
    description:
      "`nextRunTime` is the run the scheduler starts next (`Y-m-d H:i`, application time zone), null when paused or when no run is left.",
    tag,
    permission: "view/routing-schedule",
    params: scheduleParamsSchema,
    responses: () => ({ 200: { description: "The routing schedule", schema: scheduleBody() } }),
    grants: ["tableRead"],
    versioned: true,
  }),
  replace: defineRoute({
    operationId: "replaceRoutingSchedule",
    method: "PUT",
    path: "/routing/schedule/{scheduleId}",
    handler: "functions/http/routing-schedules/replace.ts",
    summary: "Replace a routing schedule",
    description: `Full replace: optional fields left out take their defaults (autoDispatch false, active true, the others null). \`logExecuted\`, \`createdBy\` and \`createdTime\` are kept.\n\n${bodyRules}`,
    tag,
    permission: "edit/routing-schedule",
    params: scheduleParamsSchema,
    body: scheduleInputSchema,
    responses: () => ({ 200: { description: "The updated routing schedule", schema: scheduleBody() } }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  patch: defineRoute({
    operationId: "patchRoutingSchedule",
    method: "PATCH",
    path: "/routing/schedule/{scheduleId}",
    handler: "functions/http/routing-schedules/patch.ts",
    summary: "Change some fields of a routing schedule",
    description: `Top-level fields sent replace the stored ones (\`schedules\` is replaced whole; null clears a nullable field, e.g. \`frequency\`/\`interval\` when leaving custom). The merged schedule is validated as a whole; a rejected patch changes nothing.\n\n${bodyRules}`,
    tag,
    permission: "edit/routing-schedule",
    params: scheduleParamsSchema,
    body: schedulePatchSchema,
    responses: () => ({ 200: { description: "The updated routing schedule", schema: scheduleBody() } }),
    grants: ["tableWrite"],
    versioned: true,
  }),
  remove: defineRoute({
    operationId: "deleteRoutingSchedule",
    method: "DELETE",
    path: "/routing/schedule/{scheduleId}",
    handler: "functions/http/routing-schedules/delete.ts",
    summary: "Delete a routing schedule",
    description:
      "Deletes the schedule and, in the same write, its due-index entry: no run starts after the delete. To stop runs but keep the schedule, PATCH `active: false`.",
    tag,
    permission: "delete/routing-schedule",
    params: scheduleParamsSchema,
    responses: () => ({
      200: { description: "Deleted", schema: z.object({ status: z.literal(true), message: z.string().check(clientText) }) },
    }),
    grants: ["tableWrite"],
    versioned: true,
  }),
};
