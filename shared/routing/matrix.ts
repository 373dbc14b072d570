// Travel-cost providers. The solver asks for one distance matrix and one minutes matrix per distinct
// vehicle speed, so custom providers (a road-network matrix, the benchmark's plane) plug in here.
import type { Location, TravelProvider, TravelSpec } from "./model.ts";

const EARTH_RADIUS_METRES = 6_371_008.8;
const DEGREES = Math.PI / 180;

/** Great-circle (haversine) distance in metres × `roadFactor`, driven at the vehicle's speed. */
export function greatCircleTravel(roadFactor = 1.3): TravelProvider {
  return {
    spec: { kind: "greatCircle", roadFactor },
    isValidLocation: (l) =>
      Number.isFinite(l.lat) && Number.isFinite(l.lng) && Math.abs(l.lat) <= 90 && Math.abs(l.lng) <= 180,
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

/** The built-in provider a spec describes (another thread rebuilds the caller's provider from its spec). */
export function travelFromSpec(spec: TravelSpec): TravelProvider {
  return spec.kind === "greatCircle" ? greatCircleTravel(spec.roadFactor) : euclideanTravel({ truncate: spec.truncate });
}
