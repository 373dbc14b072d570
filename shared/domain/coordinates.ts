import * as z from "zod/mini";
import { storableNumber } from "#shared/domain/schemas";

/**
 * Coordinates of visits, hubs' vehicles' start and end locations. Apart from the visit schemas so
 * the vehicle functions do not build those at cold start.
 */
export const coordinateObjectSchema = z.strictObject({
  lat: storableNumber().check(z.minimum(-90), z.maximum(90)),
  lng: storableNumber().check(z.minimum(-180), z.maximum(180)),
});

const coordinateTextPattern = /^\s*([+-]?\d+(?:\.\d+)?)\s*,\s*([+-]?\d+(?:\.\d+)?)\s*$/;

/** `{ lat, lng }` or the text `"lat,lng"`; always stored and answered as `{ lat, lng }`. */
export const coordinateSchema = z
  .union(
    [
      coordinateObjectSchema,
      z.pipe(
        z.pipe(
          z.string().check(z.regex(coordinateTextPattern)),
          z.transform((text: string) => {
            const [, lat, lng] = coordinateTextPattern.exec(text) as RegExpExecArray;
            return { lat: Number(lat), lng: Number(lng) };
          }),
        ),
        coordinateObjectSchema,
      ),
    ],
    { error: 'must be { lat, lng } or "lat,lng" with lat in -90..90 and lng in -180..180' },
  )
  .check(z.describe('WGS84 degrees, as `{ "lat": -6.2, "lng": 106.8 }` or `"-6.2,106.8"`.'));

export type Coordinate = z.infer<typeof coordinateObjectSchema>;
