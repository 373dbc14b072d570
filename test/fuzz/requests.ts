import fc from "fast-check";
import type { RouteDefinition } from "#shared/http/route";
import { azureAuthUrl, certificatePem, fuzzDataType, fuzzRecordValueSchemas } from "./fixtures.ts";
import type { SentRequest } from "./fuzz-client.ts";
import {
  arrayWrapping,
  contentTypes,
  hostileBodyTexts,
  hostileHeaderNames,
  hostileJsonArbitrary,
  hostileKeys,
  hostileStrings,
  type Labelled,
} from "./hostile.ts";
import { describeValue, FixtureRef, type FixtureResolver, RawJson, toJsonText, toPlainText, withOwnKey } from "./json-text.ts";
import { buildMultipart, type MultipartPart, type MultipartSpec } from "./multipart-body.ts";
import { fixtureIdProperties, type JsonSchema, jsonSchemaOf, schemaValues, type SchemaValueOptions } from "./schema-values.ts";

/**
 * One generated request of one route, before fixture ids are filled in: path parameter values,
 * query pairs, headers and a body (JSON value, raw text or multipart parts), plus labels saying
 * which hostile inputs it carries (the "input shape" of a failure report).
 */
export type PathValue = { kind: "fixture"; name: string } | { kind: "text"; text: string } | { kind: "raw"; text: string };

export type FuzzBody =
  | { kind: "json"; value: unknown; contentType?: string }
  | { kind: "text"; text: string; description: string; contentType?: string }
  | { kind: "multipart"; spec: MultipartSpec };

export interface FuzzRequest {
  operationId: string;
  method: string;
  path: string;
  params: Record<string, PathValue>;
  query: Array<[string, unknown]>;
  headers: Array<[string, string]>;
  body?: FuzzBody;
  labels: string[];
}

/** URL parts stay below the 16 KB header limit of Node's HTTP server (API Gateway's is 10 KB). */
const urlSafeHostileStrings = hostileStrings.filter((entry) => entry.value.length <= 10_000);
const rawPathSegments = ["%00", "..", "%2e%2e", "%zz", "%", "a%2Fb", "%C0%AF", "%ED%A0%80", "%EF%BB%BF", "%20"];

// ---------------------------------------------------------------- mutation of JSON values

type NodePath = Array<string | number>;

function nodePaths(value: unknown, at: NodePath = [], out: NodePath[] = []): NodePath[] {
  out.push(at);
  if (at.length >= 8 || value instanceof RawJson || value instanceof FixtureRef || value === null || typeof value !== "object") return out;
  if (Array.isArray(value))
    value.forEach((item, index) => {
      nodePaths(item, [...at, index], out);
    });
  else for (const key of Object.keys(value)) nodePaths((value as Record<string, unknown>)[key], [...at, key], out);
  return out;
}

function valueAt(value: unknown, path: NodePath): unknown {
  return path.reduce<unknown>((node, step) => (node as Record<string | number, unknown>)?.[step], value);
}

/** A copy of `value` with the node at `path` replaced (`remove` deletes an object key). */
function replacedAt(value: unknown, path: NodePath, replacement: unknown, remove = false): unknown {
  if (path.length === 0) return replacement;
  const [step, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    copy[step as number] = replacedAt(copy[step as number], rest, replacement, remove);
    return copy;
  }
  const source = value as Record<string, unknown>;
  let copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    if (key === step && remove && rest.length === 0) continue;
    copy = withOwnKey(copy, key, key === step ? replacedAt(source[key], rest, replacement, remove) : source[key]);
  }
  return copy;
}

const pathText = (path: NodePath) => (path.length === 0 ? "(whole body)" : path.join("."));

/** Replace one node (any depth, the root included) by a hostile value, or wrap it in an array. */
function replaceNode(value: unknown): fc.Arbitrary<Labelled<unknown>> {
  const paths = nodePaths(value);
  return fc.tuple(fc.constantFrom(...paths), hostileJsonArbitrary, fc.nat({ max: 9 })).map(([path, hostile, dice]) => {
    if (dice === 0) {
      const wrapped = arrayWrapping(valueAt(value, path))[dice % 2] as Labelled<unknown>;
      return { value: replacedAt(value, path, wrapped.value), label: `${pathText(path)} ← ${wrapped.label}` };
    }
    return { value: replacedAt(value, path, hostile.value), label: `${pathText(path)} ← ${hostile.label}` };
  });
}

function objectPaths(value: unknown): NodePath[] {
  return nodePaths(value).filter((path) => {
    const node = valueAt(value, path);
    return node !== null && typeof node === "object" && !Array.isArray(node) && !(node instanceof RawJson) && !(node instanceof FixtureRef);
  });
}

/** Add a prototype-polluting or otherwise odd key to one object of the body. */
function addHostileKey(value: unknown): fc.Arbitrary<Labelled<unknown>> {
  const paths = objectPaths(value);
  if (paths.length === 0) return replaceNode(value);
  return fc.tuple(fc.constantFrom(...paths), fc.constantFrom(...hostileKeys), hostileJsonArbitrary).map(([path, key, hostile]) => {
    const target = valueAt(value, path) as Record<string, unknown>;
    return {
      value: replacedAt(value, path, withOwnKey(target, key, hostile.value)),
      label: `${pathText(path)} gets key "${key}" = ${hostile.label}`,
    };
  });
}

function dropKey(value: unknown): fc.Arbitrary<Labelled<unknown>> {
  const keyed = nodePaths(value).filter((path) => path.length > 0 && typeof path[path.length - 1] === "string");
  if (keyed.length === 0) return replaceNode(value);
  return fc
    .constantFrom(...keyed)
    .map((path) => ({ value: replacedAt(value, path, undefined, true), label: `${pathText(path)} left out` }));
}

/** A valid-ish JSON value, mostly mutated with the hostile vocabulary. */
function mutatedJson(base: fc.Arbitrary<unknown>): fc.Arbitrary<Labelled<unknown>> {
  return base.chain((value) =>
    fc.oneof(
      { weight: 6, arbitrary: replaceNode(value) },
      { weight: 2, arbitrary: addHostileKey(value) },
      { weight: 1, arbitrary: dropKey(value) },
      {
        weight: 1,
        arbitrary: replaceNode(value).chain((first) =>
          replaceNode(first.value).map((second) => ({ value: second.value, label: `${first.label}; ${second.label}` })),
        ),
      },
    ),
  );
}

// ---------------------------------------------------------------- examples of valid bodies

const name = (prefix: string) => fc.string({ minLength: 1, maxLength: 8, unit: "grapheme-ascii" }).map((suffix) => `${prefix} ${suffix}`);
const ref = (fixture: string) => new FixtureRef(fixture);

/** Known-good bodies per operation: mutating them reaches rules deeper than the envelope. */
const exampleBodies: Record<string, fc.Arbitrary<unknown>> = {
  createHub: name("Hub").map((hub) => ({ name: hub, address: "Jl. Example 2", lat: -6.3, lng: 106.9, timeZone: "Asia/Jakarta" })),
  replaceHub: name("Hub").map((hub) => ({ name: hub, address: "Jl. Example 3", lat: 1.5, lng: 103.8 })),
  patchHub: name("Hub").map((hub) => ({ name: hub })),
  createVehicle: name("Van").map((van) => ({
    name: van,
    hubId: ref("hubId"),
    type: "truck",
    capacity: { weight: { min: 0, max: 500 } },
    speed: 40,
    workingTime: { startTime: "07:00", endTime: "16:00", multiday: 0 },
  })),
  replaceVehicle: name("Van").map((van) => ({ name: van, hubId: ref("hubId"), fixedCost: 12.5 })),
  patchVehicle: fc.constant({ speed: 30, plateNumber: "B 1234 XY" }),
  createVisit: name("Stop").map((stop) => ({
    hubId: ref("hubId"),
    name: stop,
    coordinate: "-6.25,106.85",
    timeWindows: [{ startTime: "08:00", endTime: "12:00" }],
    visitTime: 15,
    capacity: { weight: 3 },
    tags: ["fragile"],
  })),
  createVisitBatch: fc
    .array(name("Stop"), { minLength: 1, maxLength: 3 })
    .map((stops) => ({ visits: stops.map((stop) => ({ hubId: ref("hubId"), name: stop, coordinate: "-6.25,106.85" })) })),
  patchVisit: fc.constant({ status: "UNASSIGNED", coordinate: { lat: -6.22, lng: 106.83 } }),
  // Samples of the last minute (a sample's `at` must be within the last 24 h): a repeated one is a duplicate, still 202.
  addVehiclePositions: fc.integer({ min: 1, max: 60 }).map((secondsAgo) => ({
    positions: [{ at: new Date(Date.now() - secondsAgo * 1000).toISOString(), lat: -6.2, lng: 106.8, speedKmh: 20 }],
  })),
  createRoutingConfiguration: name("Plan").map((plan) => ({
    name: plan,
    hubId: ref("hubId"),
    vehicleIds: [ref("vehicleId")],
    timeLimitSeconds: 1,
    defaultVisitTime: 12,
  })),
  replaceRoutingConfiguration: name("Plan").map((plan) => ({ name: plan, hubId: ref("hubId"), timeLimitSeconds: 1 })),
  patchRoutingConfiguration: fc.constant({ roadFactor: 1.5, objective: "distance" }),
  createRoutingSchedule: name("Schedule").map((schedule) => ({
    name: schedule,
    configurationId: ref("configurationId"),
    periode: "custom",
    frequency: "weekly",
    interval: 2,
    schedules: [{ day: "tuesday", time: ["06:30", "18:00"] }],
    startTime: "2026-01-01 00:00",
    endTime: "2029-06-30 23:59",
  })),
  replaceRoutingSchedule: name("Schedule").map((schedule) => ({
    name: schedule,
    configurationId: ref("configurationId"),
    periode: "monthly",
    schedules: [{ date: "31", time: ["05:00"] }],
    startTime: "2026-01-01 00:00",
    endTime: "2030-12-31 23:59",
  })),
  patchRoutingSchedule: fc.constant({ active: false }),
  createRoutingResult: fc.constant({ configurationId: ref("configurationId"), name: "On demand" }),
  createDataType: name("Type").map((type) => ({
    name: type,
    fields: [
      { type: "title", title: "Code" },
      { id: "weight", title: "Weight", type: "number", required: true, validations: { min: 0, max: 1000, decimals: 1 } },
      { id: "kind", title: "Kind", type: "option", required: false, optionData: ["x", "y"] },
      {
        id: "owner",
        title: "Owner",
        type: "relation",
        required: false,
        relation: { kind: "belongsTo", targetKind: "standard", target: "vehicle" },
      },
    ],
  })),
  replaceDataType: name("Fuzz type").map((type) => fuzzDataType(type)),
  patchDataType: fc.constant({ fields: [...fuzzDataType("").fields, { id: "note", title: "Note", type: "text", required: false }] }),
  createRecord: name("Rec").map((dataId) => ({
    dataTypeId: ref("dataTypeId"),
    hubId: ref("hubId"),
    dataId,
    segment: "wholesale",
    age: 41.5,
    tags: ["a", "c"],
    location: { lat: -6.2, lng: 106.8 },
    since: "2026-02-03",
    open: "09:30",
    phone: "+6281234567890",
  })),
  replaceRecord: fc.constant({ segment: "retail", email: "fuzz@example.test", vip: true }),
  patchRecord: fc.constant({ age: 52, location: "-6.3,106.7" }),
};

// ---------------------------------------------------------------- parts of a request

type Part<T> = fc.Arbitrary<T & { labels: string[] }>;

/** Path parameters: `clean` names the fixtures (or a schema value where no fixture fits); otherwise hostile choices mix in. */
function pathValues(route: RouteDefinition, clean: boolean): Part<{ params: Record<string, PathValue> }> {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
  const schema = route.params ? jsonSchemaOf(route.params) : undefined;
  const perName = names.map((parameter) => {
    const fixture = fixtureIdProperties[parameter];
    const property = schema?.properties?.[parameter] ?? { type: "string" };
    const generated = schemaValues(property).map((value) => ({
      value: { kind: "text", text: String(value) } as PathValue,
      label: `${parameter}: schema value`,
    }));
    const fixtureValue = fixture
      ? fc.constant({ value: { kind: "fixture", name: fixture } as PathValue, label: `${parameter}: fixture` })
      : undefined;
    if (clean) return (fixtureValue ?? generated).map((choice) => [parameter, choice] as const);
    const options: Array<{ weight: number; arbitrary: fc.Arbitrary<Labelled<PathValue>> }> = [
      { weight: 2, arbitrary: generated },
      {
        weight: 4,
        arbitrary: fc
          .constantFrom(...urlSafeHostileStrings)
          .map((hostile) => ({ value: { kind: "text", text: hostile.value } as PathValue, label: `${parameter} ← ${hostile.label}` })),
      },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(...rawPathSegments)
          .map((raw) => ({ value: { kind: "raw", text: raw } as PathValue, label: `${parameter} ← raw segment ${raw}` })),
      },
    ];
    if (fixtureValue) {
      options.push({ weight: 3, arbitrary: fixtureValue });
      options.push({
        weight: 2,
        arbitrary: fc.constant({
          value: { kind: "fixture", name: `foreign:${fixture}` } as PathValue,
          label: `${parameter}: another organization's`,
        }),
      });
    }
    return fc.oneof(...options).map((choice) => [parameter, choice] as const);
  });
  return fc.tuple(...perName).map((pairs) => ({
    params: Object.fromEntries(pairs.map(([parameter, choice]) => [parameter, choice.value])),
    labels: pairs.map(([, choice]) => choice.label).filter((label) => !label.endsWith(": fixture") && !label.endsWith(": schema value")),
  }));
}

/** Known-good query strings, where the generated ones rarely pass (list records needs a type). */
const exampleQueries: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  listRecords: fc.constantFrom(
    { dataTypeId: ref("dataTypeId"), hubId: ref("hubId"), limit: 5 },
    { dataTypeName: ref("dataTypeName"), q: "fuzz", fields: "segment,age" },
  ),
  getRecord: fc.constant({ dataTypeId: ref("dataTypeId"), hubId: ref("hubId") }),
  getRecordOfType: fc.constant({ hubId: ref("hubId"), fields: "segment" }),
  replaceRecord: fc.constant({ hubId: ref("hubId") }),
  patchRecord: fc.constant({ hubId: ref("hubId") }),
  deleteRecord: fc.constant({ hubId: ref("hubId") }),
  dispatchRoutingResult: fc.constant({}),
  // Generated instants are rarely in order and within the history's range: the last hour, or the defaults.
  listVehiclePositions: fc.constantFrom({}, { from: new Date(Date.now() - 3_600_000).toISOString(), limit: 10 }, { format: "geojson" }),
};

function queryValues(route: RouteDefinition, clean: boolean): Part<{ query: Array<[string, unknown]> }> {
  const schema = route.query ? jsonSchemaOf(route.query) : undefined;
  const keys = Object.keys(schema?.properties ?? {});
  const generated = schema ? (schemaValues(schema) as fc.Arbitrary<Record<string, unknown>>) : fc.constant({} as Record<string, unknown>);
  const example = exampleQueries[route.operationId];
  const base = example ? fc.oneof({ weight: 3, arbitrary: example }, { weight: 1, arbitrary: generated }) : generated;
  return base.chain((values) => {
    const pairs = Object.entries(values).filter(([, value]) => value !== undefined) as Array<[string, unknown]>;
    if (clean) return fc.constant({ query: pairs, labels: [] as string[] });
    const hostileValue = fc
      .tuple(fc.constantFrom(...(keys.length ? keys : ["q"])), fc.constantFrom(...urlSafeHostileStrings))
      .map(([key, hostile]) => ({
        query: [...pairs.filter(([existing]) => existing !== key), [key, hostile.value]] as Array<[string, unknown]>,
        labels: [`query ${key} ← ${hostile.label}`],
      }));
    const hostileKey = fc
      .constantFrom(...hostileKeys.filter(Boolean))
      .map((key) => ({ query: [...pairs, [key, "1"]] as Array<[string, unknown]>, labels: [`query key "${key}"`] }));
    const repeated = fc.constantFrom(...(keys.length ? keys : ["limit"])).map((key) => ({
      query: [...pairs, [key, "1"], [key, "2"]] as Array<[string, unknown]>,
      labels: [`query ${key} sent twice`],
    }));
    const bracketed = fc
      .constantFrom(...(keys.length ? keys : ["limit"]))
      .map((key) => ({ query: [...pairs, [`${key}[]`, "1"]] as Array<[string, unknown]>, labels: [`query ${key}[]`] }));
    return fc.oneof(
      { weight: schema ? 5 : 0, arbitrary: hostileValue },
      { weight: 2, arbitrary: hostileKey },
      { weight: schema ? 1 : 0, arbitrary: repeated },
      { weight: 1, arbitrary: bracketed },
    );
  });
}

const headerValues = (clean: boolean): Part<{ headers: Array<[string, string]> }> =>
  clean
    ? fc.constant({ headers: [] as Array<[string, string]>, labels: [] as string[] })
    : fc
        .constantFrom(...hostileHeaderNames)
        .map((header) => ({ headers: [[header, "1"]] as Array<[string, string]>, labels: [`header "${header}"`] }));

function jsonBody(route: RouteDefinition, clean: boolean): Part<{ body?: FuzzBody }> {
  if (!route.body) {
    if (clean) return fc.constant({ labels: [] as string[] });
    return fc.oneof(
      {
        weight: 1,
        arbitrary: hostileJsonArbitrary.map((hostile) => ({
          body: { kind: "json", value: hostile.value } as FuzzBody,
          labels: [`unexpected body ← ${hostile.label}`],
        })),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(...hostileBodyTexts).map((text) => ({
          body: { kind: "text", text: text.value, description: text.label, contentType: "application/json" } as FuzzBody,
          labels: [`unexpected body: ${text.label}`],
        })),
      },
    );
  }
  const isRecordBody = ["createRecord", "replaceRecord", "patchRecord"].includes(route.operationId);
  const options: SchemaValueOptions = isRecordBody
    ? {
        extraProperties: fuzzRecordValueSchemas as unknown as Record<string, JsonSchema>,
        alwaysProperties: route.operationId === "patchRecord" ? [] : ["segment"],
      }
    : {};
  const generated = schemaValues(jsonSchemaOf(route.body), options);
  const example = exampleBodies[route.operationId];
  const base = example ? fc.oneof({ weight: 3, arbitrary: example }, { weight: 2, arbitrary: generated }) : generated;
  if (clean)
    return base.map((value) => ({
      body: { kind: "json", value } as FuzzBody,
      labels: [example ? "body valid-ish" : "body from the schema"],
    }));
  return fc.oneof(
    {
      weight: 14,
      arbitrary: mutatedJson(base).map((mutated) => ({
        body: { kind: "json", value: mutated.value } as FuzzBody,
        labels: [`body ${mutated.label}`],
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...hostileBodyTexts).map((text) => ({
        body: { kind: "text", text: text.value, description: text.label, contentType: "application/json" } as FuzzBody,
        labels: [`body: ${text.label}`],
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(base, fc.constantFrom(...contentTypes)).map(([value, type]) => ({
        body: { kind: "json", value, contentType: type.value } as FuzzBody,
        labels: [`content-type: ${type.label}`],
      })),
    },
  );
}

// ---------------------------------------------------------------- multipart bodies

const hostileFiles: ReadonlyArray<Labelled<Buffer>> = [
  { label: "empty file", value: Buffer.alloc(0) },
  { label: "text that is no certificate", value: Buffer.from("hello, not a certificate") },
  { label: "random bytes", value: Buffer.from(Array.from({ length: 256 }, (_, i) => (i * 151 + 7) % 256)) },
  {
    label: "certificate and a private key",
    value: Buffer.from(
      `${certificatePem}-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n`,
    ),
  },
  { label: "certificate with trailing junk", value: Buffer.from(`${certificatePem}junk`) },
  { label: "truncated certificate", value: Buffer.from(certificatePem.slice(0, certificatePem.length / 2)) },
  { label: "PEM block with bad base64", value: Buffer.from("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n") },
  { label: "70 KB file", value: Buffer.alloc(70 * 1024, 0x41) },
  { label: "1 MB file", value: Buffer.alloc(1024 * 1024, 0x42) },
];

const hostileFileNames = [
  "../../../etc/passwd",
  "a\u0000.pem",
  "%00.pem",
  "",
  "x".repeat(1000),
  "証明書.pem",
  'a".pem',
  "..",
  "C:\\\\Windows\\\\cert.pem",
];

function multipartBody(route: RouteDefinition, clean: boolean): Part<{ body?: FuzzBody }> {
  const schema = route.body ? jsonSchemaOf(route.body) : { properties: {} };
  const required = new Set(schema.required ?? []);
  const fieldNames = Object.keys(schema.properties ?? {});
  const textValue = (field: string) =>
    field === "integrationType"
      ? fc.constantFrom("azure", "AZURE", "okta")
      : field === "azureAuthUrl"
        ? fc.constantFrom(azureAuthUrl, "https://localhost/saml", "javascript:alert(1)", "http://login.microsoftonline.com/x")
        : fc.string({ maxLength: 20 });
  const baseParts = fc
    .tuple(
      ...fieldNames.map((field) => fc.tuple(fc.constant(field), required.has(field) ? fc.constant(true) : fc.boolean(), textValue(field))),
    )
    .map((choices) => {
      const parts: MultipartPart[] = choices
        .filter(([, included]) => included)
        .map(([field, , value]) =>
          schema.properties?.[field]?.format === "binary"
            ? { name: field, value: certificatePem, filename: "sso.pem", contentType: "application/x-pem-file" }
            : { name: field, value },
        );
      return parts.length > 0 ? parts : [{ name: "integrationType", value: "azure" }];
    });
  const boundary = fc.constantFrom("fuzzBoundary", "----WebKitFormBoundary7MA4YWxkTrZu0gW", "b");

  type Mutation = { parts: MultipartPart[]; spec?: Partial<MultipartSpec>; label: string };
  const mutate = (parts: MultipartPart[]): fc.Arbitrary<Mutation> => {
    const indexes = fc.nat({ max: parts.length - 1 });
    const fileIndex = parts.findIndex((part) => part.filename !== undefined);
    const textIndexes = parts.map((part, index) => (part.filename === undefined ? index : -1)).filter((index) => index >= 0);
    const replacePart = (index: number, part: MultipartPart) => parts.map((existing, i) => (i === index ? part : existing));
    const options: Array<{ weight: number; arbitrary: fc.Arbitrary<Mutation> }> = [
      {
        weight: 1,
        arbitrary: indexes.map((index) => ({
          parts: [...parts, parts[index] as MultipartPart],
          label: `part ${parts[index]?.name} sent twice`,
        })),
      },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(...hostileKeys.filter(Boolean), "unknownField")
          .map((key) => ({ parts: [...parts, { name: key, value: "1" }], label: `extra part "${key}"` })),
      },
      {
        weight: 1,
        arbitrary: indexes.map((index) => ({ parts: parts.filter((_, i) => i !== index), label: `part ${parts[index]?.name} left out` })),
      },
      {
        weight: 1,
        arbitrary: fc.constant({
          parts,
          spec: { contentTypeHeader: "application/json" },
          label: "multipart body sent as application/json",
        }),
      },
      {
        weight: 2,
        arbitrary: fc.constantFrom<Mutation>(
          { parts, spec: { announcedBoundary: null }, label: "no boundary in content-type" },
          { parts, spec: { announcedBoundary: "otherBoundary" }, label: "announced boundary differs" },
          { parts, spec: { lineEnding: "\n" }, label: "LF line endings" },
          { parts, spec: { omitClosingDelimiter: true }, label: "no closing delimiter" },
          { parts, spec: { boundary: "q", contentTypeHeader: 'multipart/form-data; boundary="q"' }, label: "quoted boundary" },
          { parts, spec: { boundary: "x".repeat(200) }, label: "200-character boundary" },
          {
            parts: [...parts, { name: "x", value: "1", rawHeaders: "Content-Type: text/plain" }],
            label: "part without Content-Disposition",
          },
          {
            parts: [
              ...parts,
              {
                name: "x",
                value: "1",
                rawHeaders:
                  'Content-Disposition: form-data; name="azureAuthUrl"; filename="x"\r\nContent-Disposition: form-data; name="integrationType"',
              },
            ],
            label: "two Content-Disposition headers",
          },
          {
            parts: [...parts, { name: "azureAuthUrl", value: Buffer.from([0xff, 0xfe, 0xc0, 0x80]) }],
            label: "text part that is not UTF-8",
          },
          { parts: [{ name: "__proto__", value: "polluted" }, ...parts], label: 'part named "__proto__"' },
        ),
      },
    ];
    if (textIndexes.length > 0) {
      options.push({
        weight: 4,
        arbitrary: fc.tuple(fc.constantFrom(...textIndexes), fc.constantFrom(...hostileStrings)).map(([index, hostile]) => ({
          parts: replacePart(index, { ...(parts[index] as MultipartPart), value: hostile.value }),
          label: `part ${parts[index]?.name} ← ${hostile.label}`,
        })),
      });
      options.push({
        weight: 1,
        arbitrary: fc.constantFrom(...textIndexes).map((index) => ({
          parts: replacePart(index, { ...(parts[index] as MultipartPart), filename: "field.txt" }),
          label: `text part ${parts[index]?.name} sent as a file`,
        })),
      });
    }
    if (fileIndex >= 0) {
      const file = parts[fileIndex] as MultipartPart;
      options.push(
        {
          weight: 3,
          arbitrary: fc
            .constantFrom(...hostileFiles)
            .map((hostile) => ({ parts: replacePart(fileIndex, { ...file, value: hostile.value }), label: `file ← ${hostile.label}` })),
        },
        {
          weight: 2,
          arbitrary: fc.constantFrom(...hostileFileNames).map((fileName) => ({
            parts: replacePart(fileIndex, { ...file, filename: fileName }),
            label: `file name ${describeValue(fileName)}`,
          })),
        },
        {
          weight: 1,
          arbitrary: fc.constant({
            parts: replacePart(fileIndex, { name: file.name, value: certificatePem }),
            label: "file sent as a text part",
          }),
        },
      );
    }
    return fc.oneof(...options);
  };
  return fc.tuple(baseParts, boundary).chain(([parts, chosenBoundary]) =>
    (clean ? fc.constant<Mutation>({ parts, label: "valid-ish" }) : mutate(parts)).map((mutation) => ({
      body: { kind: "multipart", spec: { boundary: chosenBoundary, ...mutation.spec, parts: mutation.parts } } as FuzzBody,
      labels: mutation.label === "valid-ish" ? ["multipart valid-ish"] : [`multipart ${mutation.label}`],
    })),
  );
}

// ---------------------------------------------------------------- whole requests

/**
 * Numbers at the edges that the schema generator itself produced (fc.double reaches subnormals
 * such as 2.5e-323): named in the labels so a failure of a "valid-ish" body points at its cause.
 */
function extremeNumbers(value: unknown, at: NodePath = [], out: string[] = []): string[] {
  if (typeof value === "number") {
    const magnitude = Math.abs(value);
    if ((magnitude > 0 && magnitude < 1e-130) || magnitude > Number.MAX_SAFE_INTEGER || Object.is(value, -0))
      out.push(`${pathText(at)} = ${Object.is(value, -0) ? "-0" : value}`);
  } else if (value && typeof value === "object" && !(value instanceof RawJson) && !(value instanceof FixtureRef) && at.length < 8) {
    for (const key of Object.keys(value))
      extremeNumbers((value as Record<string, unknown>)[key], [...at, Array.isArray(value) ? Number(key) : key], out);
  }
  return out;
}

/**
 * Which part of the request carries hostile input. Mostly one part at a time, the others clean
 * (fixture ids, example or schema values), so a request gets as far as its one bad part lets it
 * and the label names the cause; sometimes every part at once, for the combinations.
 */
type Focus = "none" | "path" | "query" | "header" | "body" | "all";

function focusArbitrary(route: RouteDefinition): fc.Arbitrary<Focus> {
  const hasParams = route.path.includes("{");
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant<Focus>("none") },
    { weight: hasParams ? 2 : 0, arbitrary: fc.constant<Focus>("path") },
    { weight: route.query ? 2 : 1, arbitrary: fc.constant<Focus>("query") },
    { weight: 1, arbitrary: fc.constant<Focus>("header") },
    { weight: route.body ? 8 : 1, arbitrary: fc.constant<Focus>("body") },
    { weight: 1, arbitrary: fc.constant<Focus>("all") },
  );
}

export function requestArbitrary(route: RouteDefinition): fc.Arbitrary<FuzzRequest> {
  const body = route.bodyType === "multipart/form-data" ? multipartBody : jsonBody;
  return focusArbitrary(route).chain((focus) => {
    const hostile = (part: Focus) => focus === part || focus === "all";
    return fc
      .tuple(
        pathValues(route, !hostile("path")),
        queryValues(route, !hostile("query")),
        headerValues(!hostile("header")),
        body(route, !hostile("body")),
      )
      .map(([path, query, headers, chosenBody]) => ({
        operationId: route.operationId,
        method: route.method,
        path: route.path,
        params: path.params,
        query: query.query,
        headers: headers.headers,
        body: chosenBody.body,
        labels: [
          ...path.labels,
          ...query.labels,
          ...headers.labels,
          ...chosenBody.labels,
          ...(chosenBody.body?.kind === "json"
            ? extremeNumbers(chosenBody.body.value)
                .slice(0, 5)
                .map((found) => `body has ${found}`)
            : []),
        ],
      }));
  });
}

function pathSegment(value: PathValue, resolve: FixtureResolver): string {
  if (value.kind === "raw") return value.text;
  const text = value.kind === "fixture" ? resolve(value.name) : value.text;
  // A lone surrogate has no UTF-8 form: send what a client's encoder would (U+FFFD's bytes).
  return [...Buffer.from(text, "utf8")]
    .map((byte) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
}

/** The request as bytes on the wire, with fixture ids filled in. */
export function materialize(request: FuzzRequest, resolve: FixtureResolver, token: string): SentRequest {
  const path = request.path.replace(/\{(\w+)\}/g, (_, parameter: string) => pathSegment(request.params[parameter] as PathValue, resolve));
  const search = new URLSearchParams();
  for (const [key, value] of request.query) search.append(key, toPlainText(value, resolve));
  const query = search.toString();
  const headers: Array<[string, string]> = [["authorization", `Bearer ${token}`], ...request.headers];
  let body: Buffer | undefined;
  const { body: spec } = request;
  if (spec?.kind === "json") {
    body = Buffer.from(toJsonText(spec.value, resolve));
    if (spec.contentType !== undefined || !("contentType" in spec)) headers.push(["content-type", spec.contentType ?? "application/json"]);
  } else if (spec?.kind === "text") {
    body = Buffer.from(spec.text);
    if (spec.contentType) headers.push(["content-type", spec.contentType]);
  } else if (spec?.kind === "multipart") {
    const built = buildMultipart(spec.spec);
    body = built.body;
    headers.push(["content-type", built.contentType]);
  }
  return { method: request.method, target: `${path}${query ? `?${query}` : ""}`, headers, body };
}

/** One line naming the request without megabytes: method, path shape, labels. */
export function describeRequest(request: FuzzRequest): string {
  const shown = request.path.replace(/\{(\w+)\}/g, (_, parameter: string) => {
    const value = request.params[parameter] as PathValue;
    return value.kind === "fixture" ? `<${value.name}>` : value.kind === "raw" ? value.text : describeValue(value.text);
  });
  const query = request.query.map(([key, value]) => `${key}=${describeValue(value)}`).join("&");
  return `${request.method} ${shown}${query ? `?${query}` : ""}`;
}

export function describeBody(request: FuzzRequest): string | undefined {
  const { body } = request;
  if (!body) return undefined;
  if (body.kind === "json")
    return `${describeValue(body.value)}${"contentType" in body ? ` (content-type ${body.contentType ?? "none"})` : ""}`;
  if (body.kind === "text") return body.description;
  return `multipart parts [${body.spec.parts.map((part) => `${part.name}${part.filename !== undefined ? ` (file ${describeValue(part.filename)}, ${Buffer.byteLength(part.value)} bytes)` : `=${describeValue(Buffer.isBuffer(part.value) ? `<${part.value.length} bytes>` : part.value)}`}`).join(", ")}]`;
}
