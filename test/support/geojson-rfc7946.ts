/**
 * A structural check of GeoJSON against RFC 7946 (the rules a reader relies on), written for the
 * tests: returns the problems found, each with the JSON path, and none for a valid document.
 * - every object has a `type` among the RFC's nine (§1.4);
 * - a FeatureCollection has a `features` array of Features (§3.3); a Feature has `geometry`
 *   (a Geometry or null) and `properties` (an object or null), and an `id` only as string or number (§3.2);
 * - a position is 2 or 3 finite numbers, longitude first, within WGS84 (§3.1.1, §4);
 * - a LineString has two or more positions (§3.1.4); a Polygon's rings are closed with four or
 *   more positions (§3.1.6); a GeometryCollection has `geometries` (§3.1.8);
 * - a `bbox` has 2·n numbers, south ≤ north (§5); members of one kind never appear on another (§7.1); no `crs` (§4).
 */
const geometryTypes = ["Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon", "GeometryCollection"] as const;

type Json = unknown;
const isObject = (value: Json): value is Record<string, Json> => typeof value === "object" && value !== null && !Array.isArray(value);

export function rfc7946Problems(document: Json): string[] {
  const problems: string[] = [];
  const problem = (path: string, message: string) => problems.push(`${path}: ${message}`);

  const position = (value: Json, path: string) => {
    if (!Array.isArray(value) || value.length < 2 || value.length > 3 || !value.every((n) => typeof n === "number" && Number.isFinite(n))) {
      return problem(path, "a position is 2 or 3 finite numbers");
    }
    const [lng, lat] = value as number[];
    if ((lng as number) < -180 || (lng as number) > 180) problem(path, `longitude ${lng} outside -180..180`);
    if ((lat as number) < -90 || (lat as number) > 90)
      problem(path, `latitude ${lat} outside -90..90 (positions are [longitude, latitude])`);
  };
  const positions = (value: Json, path: string, min: number) => {
    if (!Array.isArray(value)) return problem(path, "expected an array of positions");
    if (value.length < min) problem(path, `needs at least ${min} positions`);
    value.forEach((entry, i) => {
      position(entry, `${path}[${i}]`);
    });
  };
  const ring = (value: Json, path: string) => {
    positions(value, path, 4);
    if (Array.isArray(value) && value.length > 0 && JSON.stringify(value[0]) !== JSON.stringify(value.at(-1)))
      problem(path, "a linear ring is closed");
  };
  const bbox = (value: Json, path: string) => {
    if (value === undefined) return;
    if (!Array.isArray(value) || (value.length !== 4 && value.length !== 6) || !value.every((n) => typeof n === "number"))
      return problem(path, "bbox is 2·n numbers");
    const half = value.length / 2;
    if ((value[1] as number) > (value[1 + half] as number)) problem(path, "bbox south above north");
  };
  const foreignKinds = (object: Record<string, Json>, path: string, forbidden: string[]) => {
    for (const key of forbidden) if (key in object) problem(path, `a ${String(object.type)} has no "${key}" member`);
    if ("crs" in object) problem(path, `"crs" is not part of RFC 7946`);
  };

  const geometry = (value: Json, path: string) => {
    if (!isObject(value)) return problem(path, "expected a Geometry object");
    const type = value.type;
    if (!geometryTypes.includes(type as (typeof geometryTypes)[number]))
      return problem(path, `unknown geometry type ${JSON.stringify(type)}`);
    bbox(value.bbox, `${path}.bbox`);
    foreignKinds(value, path, ["features", "geometry", "properties"]);
    const coordinates = value.coordinates;
    if (type === "GeometryCollection") {
      if (!Array.isArray(value.geometries)) return problem(path, "a GeometryCollection has a geometries array");
      for (const [i, entry] of value.geometries.entries()) geometry(entry, `${path}.geometries[${i}]`);
      return;
    }
    if (!("coordinates" in value)) return problem(path, "a geometry has coordinates");
    const each = (min: number, check: (entry: Json, at: string) => void) => {
      if (!Array.isArray(coordinates)) return problem(`${path}.coordinates`, "expected an array");
      if (coordinates.length < min) problem(`${path}.coordinates`, `needs at least ${min} entries`);
      coordinates.forEach((entry, i) => {
        check(entry, `${path}.coordinates[${i}]`);
      });
    };
    switch (type) {
      case "Point":
        return position(coordinates, `${path}.coordinates`);
      case "MultiPoint":
        return positions(coordinates, `${path}.coordinates`, 0);
      case "LineString":
        return positions(coordinates, `${path}.coordinates`, 2);
      case "MultiLineString":
        return each(0, (entry, at) => positions(entry, at, 2));
      case "Polygon":
        return each(0, ring);
      case "MultiPolygon":
        return each(0, (entry, at) =>
          Array.isArray(entry)
            ? entry.forEach((r, i) => {
                ring(r, `${at}[${i}]`);
              })
            : problem(at, "expected an array of rings"),
        );
    }
  };

  const feature = (value: Json, path: string) => {
    if (!isObject(value) || value.type !== "Feature") return problem(path, "expected a Feature");
    if (!("geometry" in value)) problem(path, "a Feature has a geometry member (null when unlocated)");
    else if (value.geometry !== null) geometry(value.geometry, `${path}.geometry`);
    if (!("properties" in value)) problem(path, "a Feature has a properties member");
    else if (value.properties !== null && !isObject(value.properties)) problem(`${path}.properties`, "properties is an object or null");
    if ("id" in value && typeof value.id !== "string" && typeof value.id !== "number") problem(`${path}.id`, "id is a string or a number");
    bbox(value.bbox, `${path}.bbox`);
    foreignKinds(value, path, ["coordinates", "geometries", "features"]);
  };

  if (!isObject(document)) return ["$: a GeoJSON text is an object"];
  if (document.type === "FeatureCollection") {
    bbox(document.bbox, "$.bbox");
    foreignKinds(document, "$", ["coordinates", "geometries", "geometry", "properties"]);
    if (!Array.isArray(document.features)) problem("$", "a FeatureCollection has a features array");
    else
      document.features.forEach((entry, i) => {
        feature(entry, `$.features[${i}]`);
      });
  } else if (document.type === "Feature") feature(document, "$");
  else geometry(document, "$");
  return problems;
}
