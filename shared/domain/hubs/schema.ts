import * as z from "zod/mini";
import { customValuesSchema, customValuesViewSchema } from "#shared/domain/extensions/schema";
import { component, idSchema, ignoringServerSetKeys, writableKeysOf, pageQuery, storableNumber, clientText } from "#shared/domain/schemas";
import { isValidTimeZone } from "#shared/domain/time";

/**
 * Hub: the depot every route of the hub starts from (and returns to). Vehicles, visits and
 * configuration profiles each name one hub of their organization.
 */

/** Canonical spelling of a valid IANA zone (`europe/berlin` → `Europe/Berlin`). */
function canonicalZone(zone: string): string {
  return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
}

export const timeZoneSchema = z.pipe(
  z.string().check(
    clientText,
    z.trim(),
    z.minLength(1),
    z.maxLength(64),
    z.refine((zone) => isValidTimeZone(zone), { message: "must be an IANA time zone such as Europe/Berlin" }),
  ),
  z.transform(canonicalZone),
);

const hubShape = {
  name: z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(100)),
  address: z.string().check(clientText, z.trim(), z.minLength(1), z.maxLength(500)),
  lat: storableNumber().check(z.minimum(-90), z.maximum(90), z.describe("Latitude of the depot, WGS84 degrees.")),
  lng: storableNumber().check(z.minimum(-180), z.maximum(180), z.describe("Longitude of the depot, WGS84 degrees.")),
  timeZone: z
    .nullable(timeZoneSchema)
    .check(
      z.describe(
        "IANA zone of the hub's wall-clock times (visit windows, working hours); null = the application time zone (APP_TIMEZONE).",
      ),
    ),
};

const hubInputBody = z.strictObject({
  ...hubShape,
  timeZone: z._default(hubShape.timeZone, null),
  custom: z
    .optional(customValuesSchema)
    .check(
      z.describe(
        "Custom values of the organization's hub extension data type (docs/api/extensions.md). POST: absent = {} (defaults apply, required fields must be sent). PUT: absent keeps the stored values; present replaces them all (omitted hidden fields keep theirs).",
      ),
    ),
});
/** POST and PUT: the whole hub; timeZone defaults to null. */
export const hubInputSchema = ignoringServerSetKeys(hubInputBody);
export type HubInput = z.infer<typeof hubInputSchema>;

const hubPatchBody = z
  .partial(
    z.strictObject({
      ...hubShape,
      custom: customValuesSchema.check(
        z.describe(
          "Keys sent replace the stored custom values (null clears one); the merged custom values are checked as a whole. Absent: unchanged.",
        ),
      ),
    }),
  )
  .check(z.refine((patch) => Object.keys(patch).length > 0, { message: "send at least one field to change" }));
/** PATCH: any non-empty subset; merged over the stored hub and validated as a whole. */
export const hubPatchSchema = ignoringServerSetKeys(hubPatchBody);
export type HubPatch = z.infer<typeof hubPatchSchema>;

export const writableHubFields = writableKeysOf(hubInputBody, ["custom"]);

export const hubSchema = z.object({
  _id: idSchema,
  name: z.string().check(clientText),
  address: z.string().check(clientText),
  lat: z.number(),
  lng: z.number(),
  timeZone: z.nullable(z.string().check(clientText)),
  organizationId: z.string().check(clientText),
  createdTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
  updatedTime: z.string().check(clientText, z.describe("Y-m-d H:i:s, UTC")),
});
export type Hub = z.infer<typeof hubSchema>;

/** A hub as answered: the stored hub and its visible custom values. */
export const hubViewSchema = z.extend(hubSchema, { custom: customValuesViewSchema });
export type HubView = z.infer<typeof hubViewSchema>;

export const hubParamsSchema = z.strictObject({ hubId: z.string().check(clientText, z.minLength(1), z.maxLength(64)) });

export const hubListQuerySchema = pageQuery({});

/** What still names a hub; a hub with any reference cannot be deleted. */
export const hubReferenceKinds = ["vehicle", "visit", "configuration"] as const;
export type HubReferenceKind = (typeof hubReferenceKinds)[number];
export type HubReferenceCounts = Record<HubReferenceKind, number>;

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("Hub", hubViewSchema);
component("HubInput", hubInputSchema);
component("HubPatch", hubPatchSchema);
