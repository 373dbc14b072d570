// Travel-cost providers. The solver asks for one distance matrix and one minutes matrix per distinct
// vehicle speed, so custom providers (a road-network matrix, the benchmark's plane) plug in here.
import type { Location, MatrixTravelSpec, TravelProvider, TravelSpec } from "./model.ts";

const EARTH_RADIUS_METRES = 6_371_008.8;
const DEGREES = Math.PI / 180;

/** Great-circle (haversine) distance in metres × `roadFactor`, driven at the vehicle's speed. */
export function greatCircleTravel(roadFactor = 1.3): TravelProvider {
  return {
    spec: { kind: "greatCircle", roadFactor },
    isValidLocation: (l) => Number.isFinite(l.lat) && Number.isFinite(l.lng) && Math.abs(l.lat) <= 90 && Math.abs(l.lng) <= 180,
    distances(locations) {
      return fillMatrix(locations, (a, b) => roadFactor * haversineMetres(a, b));
    },
    travelMinutes(distances, speedKmh) {
      const minutesPerMetre = 60 / (speedKmh * 1000);
      return distances.map((d) => d * minutesPerMetre);
    },
  };
}

/**
 * Planar distance between (lng, lat) read as (x, y); travel time equals distance (the Solomon convention).
 * `truncate: true` is the DIMACS convention: every arc is truncated to one decimal, `floor(10 d) / 10`.
 */
export function euclideanTravel(options: { truncate?: boolean } = {}): TravelProvider {
  const measure = options.truncate
    ? (a: Location, b: Location) => Math.floor(10 * Math.hypot(a.lng - b.lng, a.lat - b.lat) + 1e-9) / 10
    : (a: Location, b: Location) => Math.hypot(a.lng - b.lng, a.lat - b.lat);
  return {
    spec: { kind: "euclidean", truncate: options.truncate ?? false },
    isValidLocation: (l) => Number.isFinite(l.lat) && Number.isFinite(l.lng),
    distances(locations) {
      return fillMatrix(locations, measure);
    },
    travelMinutes: (distances) => distances,
  };
}

export function haversineMetres(a: Location, b: Location): number {
  const dLat = (b.lat - a.lat) * DEGREES;
  const dLng = (b.lng - a.lng) * DEGREES;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * DEGREES) * Math.cos(b.lat * DEGREES) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_METRES * Math.asin(Math.min(1, Math.sqrt(h)));
}

function fillMatrix(locations: readonly Location[], measure: (a: Location, b: Location) => number): Float64Array {
  const n = locations.length;
  const matrix = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const a = locations[i]!;
    for (let j = i + 1; j < n; j++) {
      const d = measure(a, locations[j]!);
      matrix[i * n + j] = d;
      matrix[j * n + i] = d;
    }
  }
  return matrix;
}

/** A point's key in a road matrix: WGS84 degrees rounded to 1e-5 (about a metre). */
export function locationKey(location: Location): string {
  return `${location.lat.toFixed(5)},${location.lng.toFixed(5)}`;
}

/**
 * Directed durations and distances between known points (a road network's answer). Every entry is
 * read as given — i → j is not j → i — so the solver and the checker see the same asymmetric costs.
 * Durations are the network's: the vehicle's speed does not apply. A location whose key is not in the
 * matrix is not routable (`bad coordinates`).
 */
export function matrixTravel(spec: MatrixTravelSpec): TravelProvider {
  const n = spec.keys.length;
  if (spec.durationsSeconds.length !== n * n || spec.distancesMetres.length !== n * n)
    throw new RangeError(`a matrix of ${n} points needs ${n * n} entries`);
  const indexOf = new Map(spec.keys.map((key, i) => [key, i]));
  const rows = (locations: readonly Location[]) =>
    locations.map((location) => {
      const index = indexOf.get(locationKey(location));
      if (index === undefined) throw new RangeError(`no travel matrix entry for ${locationKey(location)}`);
      return index;
    });
  const pick = (locations: readonly Location[], source: Float32Array, scale: number) => {
    const at = rows(locations);
    const m = at.length;
    const matrix = new Float64Array(m * m);
    for (let i = 0; i < m; i++) {
      const row = at[i]! * n;
      for (let j = 0; j < m; j++) if (i !== j) matrix[i * m + j] = source[row + at[j]!]! * scale;
    }
    return matrix;
  };
  return {
    spec,
    isValidLocation: (l) => Number.isFinite(l.lat) && Number.isFinite(l.lng) && indexOf.has(locationKey(l)),
    distances: (locations) => pick(locations, spec.distancesMetres, 1),
    travelMinutes: (_distances, _speedKmh, locations) => pick(locations, spec.durationsSeconds, 1 / 60),
  };
}

/** The built-in provider a spec describes (another thread rebuilds the caller's provider from its spec). */
export function travelFromSpec(spec: TravelSpec): TravelProvider {
  if (spec.kind === "matrix") return matrixTravel(spec);
  return spec.kind === "greatCircle" ? greatCircleTravel(spec.roadFactor) : euclideanTravel({ truncate: spec.truncate });
}
