import { type Position, type ResultMapInput, returnsToHub, roadLines, routeColour } from "#shared/domain/routing-results/map-input";

/**
 * A routing result as one self-contained SVG picture (no tiles, no fonts or scripts, nothing
 * fetched): the hub, each vehicle's route in its own colour with the stop order, the unassigned
 * visits marked, scaled to the bounding box of what is drawn, with a scale bar and a legend.
 * Longitudes are scaled by cos(mean latitude) (an equirectangular view: true to scale across a
 * city or a region, which is what one hub's routes span).
 */
const WIDTH = 1000;
const HEIGHT = 720;
/** The stop table under the map (printed with it): one row per stop, up to the numbered stops. */
const TABLE_ROW = 16;
const MAP = { left: 20, top: 56, width: 680, height: 600 };
const LEGEND_X = 720;
const METRES_PER_DEGREE = 111_320;
/** The smallest span drawn (degrees), so a single point or a tight cluster is not blown up to street level. */
const MIN_SPAN = 0.005;
/** Above this many stops the order numbers would hide the routes: the dots get smaller and lose them. */
const NUMBERED_STOPS_MAX = 300;
const LEGEND_VEHICLES_MAX = 20;
const HUB_COLOUR = "#222222";
const UNASSIGNED_COLOUR = "#7f7f7f";
/** A failed stop's ×, and the ring of a stop projected late (at risk: RISK_COLOUR). */
const FAILED_COLOUR = "#d62728";
const RISK_COLOUR = "#ff7f0e";

/**
 * Characters XML 1.0 cannot carry at all, escaped or not (its Char production: controls other than
 * tab, LF and CR, lone surrogates, U+FFFE and U+FFFF). Names stored before the text rule
 * (shared/domain/schemas.ts) may still hold them; they are drawn as U+FFFD so the SVG stays well-formed.
 */
const NOT_XML_CHAR =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finds the control characters XML 1.0 cannot hold
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const escapeXml = (text: string) =>
  text
    .replace(NOT_XML_CHAR, "\ufffd")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
const fixed = (value: number) => (Math.round(value * 10) / 10).toString();

/** 1, 2 or 5 × 10^k metres, the largest not above `metres`. */
export function niceDistance(metres: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(metres, 1)));
  const step = [5, 2, 1].find((factor) => factor * power <= metres) ?? 1;
  return step * power;
}

export const formatDistance = (metres: number) => (metres >= 1000 ? `${Number((metres / 1000).toFixed(1))} km` : `${Math.round(metres)} m`);

interface Projection {
  point(at: Position): { x: number; y: number };
  metresPerPixel: number;
}

function projection(positions: readonly Position[]): Projection | undefined {
  if (positions.length === 0) return undefined;
  const lats = positions.map((at) => at.lat);
  const meanLat = lats.reduce((sum, lat) => sum + lat, 0) / lats.length;
  const shrink = Math.max(Math.cos((meanLat * Math.PI) / 180), 0.01);
  const xs = positions.map((at) => at.lng * shrink);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...lats), Math.max(...lats)];
  const spanX = Math.max(maxX - minX, MIN_SPAN);
  const spanY = Math.max(maxY - minY, MIN_SPAN);
  const inset = 24;
  const scale = Math.min((MAP.width - 2 * inset) / spanX, (MAP.height - 2 * inset) / spanY);
  const offsetX = MAP.left + (MAP.width - (maxX - minX) * scale) / 2;
  const offsetY = MAP.top + (MAP.height - (maxY - minY) * scale) / 2;
  return {
    point: (at) => ({ x: offsetX + (at.lng * shrink - minX) * scale, y: offsetY + (maxY - at.lat) * scale }),
    metresPerPixel: METRES_PER_DEGREE / scale,
  };
}

const xy = ({ x, y }: { x: number; y: number }) => `${fixed(x)},${fixed(y)}`;

export function resultToSvg({ result, hub, droppedPositions, live }: ResultMapInput): string {
  const stops = result.routes.flatMap((route) => route.trips.map((trip) => trip.coordinate));
  const roads = result.routes.map((route) => roadLines(route));
  const dropped = result.dropped.flatMap((entry) => {
    const at = droppedPositions.get(entry.visitId);
    return at ? [{ entry, at }] : [];
  });
  const positions = live ? result.routes.flatMap((route) => live.vehicles.get(route.vehicleId) ?? []) : [];
  const view = projection([
    ...(hub ? [hub] : []),
    ...stops,
    ...positions,
    ...dropped.map(({ at }) => at),
    ...roads.flatMap((lines) => (lines ? [...lines.out, ...lines.back] : [])),
  ]);
  const numbered = stops.length <= NUMBERED_STOPS_MAX;
  const table = numbered ? stopTable(result, live) : [];
  const height = HEIGHT + (table.length > 0 ? (table.length + 2) * TABLE_ROW : 0);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<title>${escapeXml(`Routing result ${result.name}`)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${MAP.left}" y="28" font-size="18" font-weight="bold">${escapeXml(result.name)}</text>`,
    `<text x="${MAP.left}" y="46" fill="#555555">${escapeXml(subtitle(result, live))}</text>`,
    `<rect x="${MAP.left}" y="${MAP.top}" width="${MAP.width}" height="${MAP.height}" fill="#f7f7f4" stroke="#cccccc"/>`,
  );

  if (!view) {
    out.push(
      `<text x="${MAP.left + MAP.width / 2}" y="${MAP.top + MAP.height / 2}" text-anchor="middle" fill="#555555">Nothing to draw: no hub, stop or unassigned visit with a position.</text>`,
    );
  } else {
    // Unassigned visits first, under the routes.
    out.push(`<g id="unassigned" stroke="${UNASSIGNED_COLOUR}" stroke-width="2">`);
    for (const { entry, at } of dropped) {
      const { x, y } = view.point(at);
      out.push(
        `<g><title>${escapeXml(`Unassigned: ${entry.visitName} (${entry.reason})`)}</title><path d="M${fixed(x - 5)},${fixed(y - 5)}L${fixed(x + 5)},${fixed(y + 5)}M${fixed(x - 5)},${fixed(y + 5)}L${fixed(x + 5)},${fixed(y - 5)}"/></g>`,
      );
    }
    out.push(`</g>`);

    result.routes.forEach((route, index) => {
      const colour = routeColour(index);
      const points = route.trips.map((trip) => view.point(trip.coordinate));
      const start = hub ? [view.point(hub)] : [];
      out.push(`<g class="route" data-vehicle-id="${escapeXml(route.vehicleId)}">`);
      const road = roads[index];
      // Road geometry when the result has it (class "road"), else the stops joined straight (class "straight").
      const lineClass = road ? "road" : "straight";
      const path = road ? road.out.map((at) => view.point(at)) : [...start, ...points];
      if (path.length >= 2) {
        out.push(
          `<polyline class="${lineClass}" points="${path.map(xy).join(" ")}" fill="none" stroke="${colour}" stroke-width="3" stroke-linejoin="round" stroke-linecap="round" stroke-opacity="0.85"/>`,
        );
      }
      const last = points.at(-1);
      const back = road ? road.back.map((at) => view.point(at)) : hub && last && returnsToHub(route) ? [last, view.point(hub)] : [];
      if (back.length >= 2) {
        out.push(
          `<polyline class="${lineClass} back" points="${back.map(xy).join(" ")}" fill="none" stroke="${colour}" stroke-width="2" stroke-dasharray="6 4" stroke-opacity="0.7"/>`,
        );
      }
      route.trips.forEach((trip, tripIndex) => {
        const { x, y } = points[tripIndex] as { x: number; y: number };
        const stop = live?.stops.get(trip.visitId);
        const tip = `${route.vehicleName} #${trip.order}: ${trip.visitName}, eta ${trip.eta}, etd ${trip.etd}${stop ? liveTip(stop) : ""}`;
        if (live) {
          out.push(liveStopMark({ x, y }, trip.order, colour, numbered, tip, stop));
          return;
        }
        out.push(`<g class="stop"><title>${escapeXml(tip)}</title>`);
        if (numbered) {
          out.push(
            `<circle cx="${fixed(x)}" cy="${fixed(y)}" r="8" fill="${colour}" stroke="#ffffff" stroke-width="1.5"/>`,
            `<text x="${fixed(x)}" y="${fixed(y + 3.5)}" text-anchor="middle" font-size="${trip.order >= 100 ? 7 : 10}" font-weight="bold" fill="#ffffff">${trip.order}</text>`,
          );
        } else {
          out.push(`<circle cx="${fixed(x)}" cy="${fixed(y)}" r="3.5" fill="${colour}" stroke="#ffffff" stroke-width="0.8"/>`);
        }
        out.push(`</g>`);
      });
      out.push(`</g>`);
    });

    for (const route of result.routes) {
      const at = live?.vehicles.get(route.vehicleId);
      if (at) out.push(positionMark(view.point(at), route.vehicleName, routeColour(result.routes.indexOf(route)), at));
    }

    if (hub) {
      const { x, y } = view.point(hub);
      out.push(
        `<g id="hub"><title>${escapeXml(`Hub: ${hub.name}`)}</title><rect x="${fixed(x - 9)}" y="${fixed(y - 9)}" width="18" height="18" fill="${HUB_COLOUR}" stroke="#ffffff" stroke-width="2"/><text x="${fixed(x)}" y="${fixed(y + 4)}" text-anchor="middle" font-size="11" font-weight="bold" fill="#ffffff">H</text></g>`,
      );
    }
    out.push(scaleBar(view.metresPerPixel));
  }
  out.push(legend({ result, hub, droppedPositions, live }, dropped.length));
  if (table.length > 0) {
    // Stop numbers, names, times, windows and loads in the picture itself: a print or a PNG keeps them.
    // A dispatched result adds the projected ETA beside the planned one, and the stop's status.
    const columns = live
      ? [MAP.left, MAP.left + 40, MAP.left + 210, MAP.left + 320, MAP.left + 430, MAP.left + 560, MAP.left + 640, MAP.left + 820]
      : [MAP.left, MAP.left + 110, MAP.left + 400, MAP.left + 520, MAP.left + 640, MAP.left + 820];
    const header = live
      ? ["Stop", "Visit", "ETA", "Projected ETA", "Status", "Service start", "Window", "Load"]
      : ["Stop", "Visit", "ETA", "Service start", "Window", "Load"];
    let y = HEIGHT + TABLE_ROW;
    out.push(`<g id="stop-table">`);
    out.push(header.map((text, c) => `<text x="${columns[c]}" y="${y}" font-weight="bold">${escapeXml(text)}</text>`).join(""));
    for (const row of table) {
      y += TABLE_ROW;
      out.push(`<text x="${columns[0]}" y="${y}" fill="${row.colour}" font-weight="bold">${escapeXml(row.stop)}</text>`);
      out.push(row.cells.map((text, c) => `<text x="${columns[c + 1]}" y="${y}">${escapeXml(text)}</text>`).join(""));
    }
    out.push(`</g>`);
  }
  out.push(`</svg>`);
  return `${out.join("\n")}\n`;
}

/**
 * One row per stop: the vehicle's colour and stop number, then name, ETA, service start, window and load;
 * on a dispatched result also the projected ETA (after the planned one) and the status (with a risk other than ON_TIME).
 */
function stopTable(
  result: ResultMapInput["result"],
  live: ResultMapInput["live"],
): Array<{ stop: string; colour: string; cells: string[] }> {
  return result.routes.flatMap((route, index) =>
    route.trips.map((trip) => ({
      stop: `${index + 1}.${trip.order}`,
      colour: routeColour(index),
      cells: [
        `${trip.visitName}`.slice(0, live ? 26 : 44),
        trip.eta,
        ...(live ? liveCells(live.stops.get(trip.visitId)) : []),
        trip.serviceStart.slice(11),
        trip.window ?? "any time",
        Object.entries(trip.load)
          .map(([dimension, value]) => `${dimension} ${value}`)
          .join(", "),
      ],
    })),
  );
}

function subtitle(result: ResultMapInput["result"], live: ResultMapInput["live"]): string {
  const parts = [`status ${result.status}`];
  if (live) parts.push(`dispatched, day as of ${live.asOf.slice(0, 16).replace("T", " ")} UTC`);
  if (result.summary) parts.push(`planning day ${result.summary.planningDay}`, `times in ${result.summary.timeZone}`);
  if (result.summary) parts.push(`travel: ${result.summary.travel?.source ?? "greatCircle"}`);
  if (result.status !== "done" && result.message) parts.push(result.message);
  return parts.join(" · ");
}

function scaleBar(metresPerPixel: number): string {
  const metres = niceDistance((MAP.width / 4) * metresPerPixel);
  const length = metres / metresPerPixel;
  const x = MAP.left + 16;
  const y = MAP.top + MAP.height - 18;
  return [
    `<g id="scale-bar">`,
    `<rect x="${x - 6}" y="${y - 20}" width="${fixed(length + 12)}" height="30" fill="#ffffff" fill-opacity="0.8"/>`,
    `<path d="M${x},${y - 6}V${y}H${fixed(x + length)}V${y - 6}" fill="none" stroke="#222222" stroke-width="2"/>`,
    `<text x="${fixed(x + length / 2)}" y="${y - 8}" text-anchor="middle">${formatDistance(metres)}</text>`,
    `</g>`,
  ].join("");
}

function legend({ result, hub, live }: ResultMapInput, droppedOnMap: number): string {
  const lines: string[] = [`<g id="legend">`, `<text x="${LEGEND_X}" y="${MAP.top + 14}" font-weight="bold">Legend</text>`];
  let y = MAP.top + 38;
  const row = (symbol: string, label: string) => {
    lines.push(symbol, `<text x="${LEGEND_X + 26}" y="${y + 4}">${escapeXml(label)}</text>`);
    y += 22;
  };
  row(
    `<rect x="${LEGEND_X + 3}" y="${y - 7}" width="14" height="14" fill="${HUB_COLOUR}"/>`,
    hub ? `Hub: ${hub.name}` : "Hub: not found (deleted since the run)",
  );
  result.routes.slice(0, LEGEND_VEHICLES_MAX).forEach((route, index) => {
    row(
      `<line x1="${LEGEND_X}" y1="${y}" x2="${LEGEND_X + 20}" y2="${y}" stroke="${routeColour(index)}" stroke-width="4"/>`,
      `${route.vehicleName}: ${route.trips.length} stops, ${formatDistance(route.distanceMeters)}`,
    );
  });
  if (result.routes.length > LEGEND_VEHICLES_MAX) row("", `… and ${result.routes.length - LEGEND_VEHICLES_MAX} more vehicles`);
  const unplaced = result.dropped.length - droppedOnMap;
  row(
    `<path d="M${LEGEND_X + 5},${y - 5}L${LEGEND_X + 15},${y + 5}M${LEGEND_X + 5},${y + 5}L${LEGEND_X + 15},${y - 5}" stroke="${UNASSIGNED_COLOUR}" stroke-width="2"/>`,
    `Unassigned: ${result.dropped.length}${unplaced > 0 ? ` (${unplaced} without a position)` : ""}`,
  );
  row(
    `<line x1="${LEGEND_X}" y1="${y}" x2="${LEGEND_X + 20}" y2="${y}" stroke="#555555" stroke-width="2" stroke-dasharray="6 4"/>`,
    "Drive back to the hub",
  );
  if (live) {
    const counts = (status: string) =>
      result.routes.reduce((sum, route) => sum + route.trips.filter((trip) => live.stops.get(trip.visitId)?.status === status).length, 0);
    row(
      `<circle class="legend-done" cx="${LEGEND_X + 10}" cy="${y}" r="6" fill="#ffffff" stroke="#555555" stroke-width="2.5"/>`,
      `Done: ${counts("DONE")}`,
    );
    row(
      `<g class="legend-failed"><circle cx="${LEGEND_X + 10}" cy="${y}" r="6" fill="#ffffff" stroke="${FAILED_COLOUR}" stroke-width="1.5"/>${cross(LEGEND_X + 10, y, 3.5)}</g>`,
      `Failed: ${counts("FAILED")}`,
    );
    row(
      `<circle cx="${LEGEND_X + 10}" cy="${y}" r="6" fill="#555555" stroke="${FAILED_COLOUR}" stroke-width="2.5"/>`,
      "Projected late (orange: at risk)",
    );
    row(
      `<path class="legend-position" d="${diamond(LEGEND_X + 10, y, 7)}" fill="#555555" stroke="#000000" stroke-width="1.5"/>`,
      `Vehicle position: ${live.vehicles.size}`,
    );
    row("", "(faded: over 5 minutes old)");
  }
  const withRoads = result.routes.filter((route) => roadLines(route)).length;
  const source = result.summary?.travel?.source ?? "greatCircle";
  // Two short rows each: the legend column is ~40 characters wide.
  if (withRoads > 0) {
    row("", "Lines follow the roads");
    row("", `(${source} road geometry)`);
  }
  if (withRoads < result.routes.length || result.routes.length === 0) {
    row("", withRoads > 0 ? "Other routes: straight lines" : "Straight lines between stops");
    row("", "(great circle), not along roads");
  }
  if (result.summary) {
    y += 8;
    row("", `${result.summary.visitsAssigned} of ${result.summary.visitsPlanned} visits assigned`);
    row(
      "",
      `${result.summary.vehiclesUsed} of ${result.summary.vehiclesAvailable} vehicles used, ${formatDistance(result.summary.distanceMeters)}`,
    );
  }
  lines.push(`</g>`);
  return lines.join("");
}

/** A red × centred on (x, y). */
function cross(x: number, y: number, half: number): string {
  return `<path d="M${fixed(x - half)},${fixed(y - half)}L${fixed(x + half)},${fixed(y + half)}M${fixed(x - half)},${fixed(y + half)}L${fixed(x + half)},${fixed(y - half)}" stroke="${FAILED_COLOUR}" stroke-width="2.5" stroke-linecap="round"/>`;
}

const diamond = (x: number, y: number, r: number) =>
  `M${fixed(x)},${fixed(y - r)}L${fixed(x + r)},${fixed(y)}L${fixed(x)},${fixed(y + r)}L${fixed(x - r)},${fixed(y)}Z`;

type LiveStop = NonNullable<ResultMapInput["live"]>["stops"] extends ReadonlyMap<string, infer S> ? S : never;
type LiveVehicle = NonNullable<ResultMapInput["live"]>["vehicles"] extends ReadonlyMap<string, infer V> ? V : never;

function liveTip(stop: LiveStop): string {
  const parts = [`, ${stop.status}`];
  if (stop.projectedEta) parts.push(`, projected ${stop.projectedEta}`);
  if (stop.risk) parts.push(` (${stop.risk})`);
  return parts.join("");
}

function liveCells(stop: LiveStop | undefined): string[] {
  if (!stop) return ["", "DELETED"];
  return [stop.projectedEta ?? "", stop.risk && stop.risk !== "ON_TIME" ? `${stop.status} ${stop.risk}` : stop.status];
}

/**
 * A stop of a dispatched result (class `stop` plus its status in lower case): done is hollow in the route's
 * colour, failed hollow red with a ×, an open stop as planned with a red ring when projected late and an
 * orange one at risk.
 */
function liveStopMark(
  at: { x: number; y: number },
  order: number,
  colour: string,
  numbered: boolean,
  tip: string,
  stop: LiveStop | undefined,
): string {
  const status = stop?.status ?? "DELETED";
  const r = numbered ? 8 : 3.5;
  const { x, y } = at;
  const parts = [
    `<g class="stop ${status.toLowerCase().replace(/_/g, "-")}" data-status="${escapeXml(status)}"><title>${escapeXml(tip)}</title>`,
  ];
  const label = (fill: string) =>
    numbered
      ? `<text x="${fixed(x)}" y="${fixed(y + 3.5)}" text-anchor="middle" font-size="${order >= 100 ? 7 : 10}" font-weight="bold" fill="${fill}">${order}</text>`
      : "";
  if (status === "DONE") {
    parts.push(`<circle cx="${fixed(x)}" cy="${fixed(y)}" r="${r}" fill="#ffffff" stroke="${colour}" stroke-width="2.5"/>`, label(colour));
  } else if (status === "FAILED") {
    parts.push(
      `<circle cx="${fixed(x)}" cy="${fixed(y)}" r="${r}" fill="#ffffff" stroke="${FAILED_COLOUR}" stroke-width="1.5"/>`,
      cross(x, y, r * 0.55),
    );
  } else {
    const ring = stop?.risk === "LATE" ? FAILED_COLOUR : stop?.risk === "AT_RISK" ? RISK_COLOUR : "#ffffff";
    const width = ring === "#ffffff" ? (numbered ? 1.5 : 0.8) : 2.5;
    parts.push(
      `<circle cx="${fixed(x)}" cy="${fixed(y)}" r="${r}" fill="${colour}" stroke="${ring}" stroke-width="${width}"/>`,
      label("#ffffff"),
    );
  }
  parts.push(`</g>`);
  return parts.join("");
}

/** A vehicle's latest position: a diamond in its route's colour, faded when it is over 5 minutes old. */
function positionMark(at: { x: number; y: number }, vehicleName: string, colour: string, position: LiveVehicle): string {
  const tip = `${vehicleName} at ${position.at.slice(11, 16)} UTC (${position.ageMinutes} min ago)`;
  return `<g class="position${position.fresh ? "" : " stale"}" data-vehicle-id="${escapeXml(position.vehicleId)}"><title>${escapeXml(tip)}</title><path d="${diamond(at.x, at.y, 10)}" fill="${colour}" fill-opacity="${position.fresh ? 1 : 0.4}" stroke="#000000" stroke-width="2"/></g>`;
}
