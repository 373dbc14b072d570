// Solomon / Gehring–Homberger VRPTW instances (CRLF text files) and their best-known-solution tables,
// as described in ../shared/benchmarks/vrptw/SOURCES.md.
import { readFileSync } from "node:fs";
import { euclideanTravel } from "#shared/routing/matrix";
import type { RoutingProblem } from "#shared/routing/model";

export interface VrptwNode {
  id: number;
  x: number;
  y: number;
  demand: number;
  ready: number;
  due: number;
  service: number;
}

export interface VrptwInstance {
  name: string;
  fleetSize: number;
  capacity: number;
  /** Node 0 is the depot; its due date ends the horizon. */
  nodes: VrptwNode[];
}

export interface BestKnown {
  /** NaN when the table has no vehicle column (DIMACS: vehicles unlimited). */
  vehicles: number;
  distance: number;
  /** The row holds a proven lower bound, not an achieved value (R109, RC103 in the distance-only table). */
  lowerBound?: boolean;
}

/** `exact`: double-precision Euclidean distances; `dimacs`: every arc truncated to one decimal. */
export type DistanceConvention = "exact" | "dimacs";

export function parseVrptw(text: string): VrptwInstance {
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  const vehicleHeader = lines.indexOf("VEHICLE");
  const [fleetSize, capacity] = lines[vehicleHeader + 2]!.split(/\s+/).map(Number);
  const customerHeader = lines.indexOf("CUSTOMER");
  const nodes = lines
    .slice(customerHeader + 1)
    .map((line) => line.split(/\s+/).map(Number))
    .filter((fields) => fields.length === 7 && fields.every(Number.isFinite))
    .map(([id, x, y, demand, ready, due, service]) => ({
      id: id!,
      x: x!,
      y: y!,
      demand: demand!,
      ready: ready!,
      due: due!,
      service: service!,
    }));
  if (!fleetSize || !capacity || nodes.length < 2 || nodes[0]!.id !== 0) throw new Error(`not a VRPTW instance: ${lines[0]}`);
  return { name: lines[0]!, fleetSize, capacity, nodes };
}

export function readVrptw(path: string): VrptwInstance {
  return parseVrptw(readFileSync(path, "utf8"));
}

/** The routing problem: planar coordinates, travel time = distance, one vehicle per fleet slot. */
export function toRoutingProblem(instance: VrptwInstance, convention: DistanceConvention = "exact"): RoutingProblem {
  const [depot, ...customers] = instance.nodes;
  const at = (node: VrptwNode) => ({ lat: node.y, lng: node.x });
  return {
    travel: euclideanTravel({ truncate: convention === "dimacs" }),
    visits: customers.map((node) => ({
      id: String(node.id),
      location: at(node),
      visitTime: node.service,
      timeWindows: [{ start: node.ready, end: node.due }],
      demand: [node.demand],
    })),
    vehicles: Array.from({ length: instance.fleetSize }, (_, k) => ({
      id: `vehicle-${k + 1}`,
      start: at(depot!),
      capacity: [instance.capacity],
      workingTime: { start: depot!.ready, end: depot!.due },
    })),
  };
}

/**
 * A BKS table keyed by instance name in lower case: `instance,vehicles,distance,source` or (DIMACS)
 * `instance,distance,convention,source`. A `source` starting with "LOWER BOUND" marks a lower bound.
 */
export function readBestKnown(path: string): Map<string, BestKnown> {
  const table = new Map<string, BestKnown>();
  const [header, ...rows] = readFileSync(path, "utf8").split(/\r?\n/);
  const columns = header!.split(",");
  const column = (name: string) => columns.indexOf(name);
  for (const line of rows) {
    const fields = splitCsv(line);
    const name = fields[column("instance")];
    const distance = fields[column("distance")];
    if (!name || !distance) continue;
    const vehicles = column("vehicles") >= 0 ? Number(fields[column("vehicles")]) : NaN;
    const lowerBound = (fields[column("source")] ?? "").startsWith("LOWER BOUND");
    table.set(name.toLowerCase(), { vehicles, distance: Number(distance), ...(lowerBound ? { lowerBound } : {}) });
  }
  return table;
}

/** Comma-separated fields, double quotes around fields that hold commas. */
function splitCsv(line: string): string[] {
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (const char of line) {
    if (char === '"') quoted = !quoted;
    else if (char === "," && !quoted) {
      fields.push(field);
      field = "";
    } else field += char;
  }
  fields.push(field);
  return fields;
}
