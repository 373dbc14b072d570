// Records for the plan tests (time semantics, reason codes, checks): a hub, a profile, vehicles and visits.
import type { RoutingConfiguration } from "#shared/domain/configurations/schema";
import type { Hub } from "#shared/domain/hubs/schema";
import type { RunPlanInput } from "#shared/domain/runs/build-problem";
import type { Vehicle } from "#shared/domain/vehicles/schema";
import type { Visit } from "#shared/domain/visits/schema";

export const hub = (timeZone: string | null = null): Hub => ({
  _id: "hub-1",
  name: "Depot",
  address: "x",
  lat: -6.2,
  lng: 106.8,
  timeZone,
  organizationId: "o",
  createdTime: "2026-01-01 00:00:00",
  updatedTime: "2026-01-01 00:00:00",
});

export const profile = (overrides: Partial<RoutingConfiguration> = {}): RoutingConfiguration => ({
  _id: "conf-1",
  name: "Plan",
  hubId: "hub-1",
  vehicleIds: [],
  returnToHub: true,
  defaultSpeed: 30,
  defaultVisitTime: 12,
  capacityConstraint: { weight: true, volume: false },
  objective: "hierarchical",
  timeLimitSeconds: 5,
  roadFactor: 1.5,
  travelProvider: null,
  travelFallback: "fail",
  atRiskMinutes: 15,
  etaChangeMinutes: 10,
  autoArrival: false,
  arrivalRadiusMeters: 75,
  liveDayAssigned: "keepVehicle",
  liveDayUseIdleVehicles: true,
  organizationId: "o",
  createdTime: "2026-01-01 00:00:00",
  updatedTime: "2026-01-01 00:00:00",
  ...overrides,
});

export const vehicle = (overrides: Partial<Vehicle> = {}): Vehicle => ({
  _id: "veh-1",
  name: "Van",
  type: "car",
  plateNumber: null,
  hubId: "hub-1",
  assignee: null,
  capacity: { weight: { min: 5, max: 100 }, volume: { max: 2 } },
  speed: 40,
  workingTime: { startTime: "08:00", endTime: "17:00", multiday: 0 },
  breakTime: null,
  tags: ["cold"],
  fixedCost: 0,
  startLocation: null,
  endLocation: null,
  constraints: { maxVisits: 20, maxDistanceKm: 150, maxDurationMinutes: 480 },
  organizationId: "o",
  createdTime: "2026-01-01 00:00:00",
  updatedTime: "2026-01-01 00:00:00",
  ...overrides,
});

export const visit = (id: string, overrides: Partial<Visit> = {}): Visit => ({
  _id: id,
  hubId: "hub-1",
  name: `Visit ${id}`,
  address: null,
  coordinate: { lat: -6.21, lng: 106.81 },
  timeWindows: [],
  visitTime: null,
  capacity: { weight: 3, volume: 1 },
  tags: [],
  status: "UNASSIGNED",
  priority: 3,
  pickupVisitId: null,
  assignedVehicleId: null,
  routingResultId: null,
  routePlannedOrder: null,
  eta: null,
  etd: null,
  attempts: 0,
  failureReason: null,
  lastTransition: null,
  requirements: { photo: false, signature: false, notes: false },
  proofs: [],
  organizationId: "o",
  createdTime: "2026-01-01 00:00:00",
  updatedTime: "2026-01-01 00:00:00",
  ...overrides,
});

export const input = (runAtIso: string, overrides: Partial<RunPlanInput> = {}): RunPlanInput => ({
  runAt: new Date(runAtIso),
  hub: hub(),
  configuration: profile(),
  vehicles: [vehicle()],
  visits: [visit("a")],
  appTimeZone: "UTC",
  ...overrides,
});
