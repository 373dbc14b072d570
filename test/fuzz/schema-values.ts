import fc from "fast-check";
import { toJSONSchema, type core } from "zod/mini";
import { FixtureRef } from "./json-text.ts";

/**
 * Valid-ish values from a route's zod schemas, generically: the schema is turned into JSON Schema
 * (`z.toJSONSchema`, as the OpenAPI document does) and walked. "Valid-ish" because refinements
 * and cross-field rules are not visible in JSON Schema: the values pass the shape, often not the
 * rules, which is what reaches the domain code. Properties named like a fixture id (`hubId`,
 * `configurationId`, …) mostly take the fuzz organization's real ids, so writes get past 404s.
 */
export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
};

export function jsonSchemaOf(schema: core.$ZodType): JsonSchema {
  const { $schema: _dropped, ...rest } = toJSONSchema(schema, { target: "draft-2020-12", io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest as JsonSchema;
}

/**
 * Property names whose values are ids of the fuzz organization's fixtures. Arrays of ids
 * (`vehicleIds`) take one fixture id in an array; query strings take it as text.
 */
export const fixtureIdProperties: Record<string, string> = {
  hubId: "hubId",
  vehicleId: "vehicleId",
  assignedVehicleId: "vehicleId",
  vehicleIds: "vehicleId",
  configurationId: "configurationId",
  scheduleId: "scheduleId",
  visitId: "visitId",
  resultId: "resultId",
  routingResultId: "resultId",
  appIntegrationId: "appIntegrationId",
  webhookId: "webhookId",
  url: "webhookUrl",
  dataTypeId: "dataTypeId",
  dataTypeName: "dataTypeName",
  dataId: "dataId",
};

const MAX_DEPTH = 6;

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 24, 24));
  if (schema.pattern) {
    try {
      const pattern = new RegExp(schema.pattern, "u");
      return fc.stringMatching(pattern).filter((text) => text.length >= minLength && text.length <= (schema.maxLength ?? Infinity));
    } catch {
      // a pattern fast-check cannot generate from: fall back to plain strings
    }
  }
  if (schema.format === "date-time") return fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
  if (schema.format === "uri" || schema.format === "url") return fc.webUrl();
  if (schema.format === "email") return fc.emailAddress();
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength, maxLength }) },
  );
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 1e-9) : undefined);
  const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 1e-9) : undefined);
  if (integer) {
    return fc.integer({
      min: Math.max(min ?? -1_000_000, Number.MIN_SAFE_INTEGER),
      max: Math.min(max ?? 1_000_000, Number.MAX_SAFE_INTEGER),
    });
  }
  const bounded = fc.double({ min: min ?? -1e6, max: max ?? 1e6, noNaN: true, noDefaultInfinity: true });
  // Mostly short decimals, like a client's: doubles with 17 significant digits hit `decimals` rules only.
  return fc.oneof(
    {
      weight: 3,
      arbitrary: bounded
        .map((value) => Math.round(value * 1000) / 1000)
        .filter((value) => (min === undefined || value >= min) && (max === undefined || value <= max)),
    },
    { weight: 1, arbitrary: bounded },
  );
}

export interface SchemaValueOptions {
  /** Extra properties to generate for objects that accept any property (record values). */
  extraProperties?: Record<string, JsonSchema>;
  /** Properties always sent even when optional (record fields the fixture type requires). */
  alwaysProperties?: string[];
}

/** Valid-ish values of `schema`; the property name (when known) selects fixture ids. */
export function schemaValues(
  schema: JsonSchema,
  options: SchemaValueOptions = {},
  propertyName?: string,
  depth = 0,
): fc.Arbitrary<unknown> {
  const fixture = propertyName ? fixtureIdProperties[propertyName] : undefined;
  const generated = generatedValues(schema, options, depth);
  if (!fixture) return generated;
  const reference = new FixtureRef(fixture);
  const isArray = schema.type === "array" || schema.anyOf?.some((option) => option.type === "array");
  return fc.oneof({ weight: 6, arbitrary: fc.constant(isArray ? [reference] : reference) }, { weight: 1, arbitrary: generated });
}

function generatedValues(schema: JsonSchema, options: SchemaValueOptions, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    // null last and rarer: a nullable field is mostly sent with a value
    return fc.oneof(
      ...alternatives.map((alternative) => ({
        weight: alternative.type === "null" ? 1 : 3,
        arbitrary: generatedValues(alternative, options, depth),
      })),
    );
  }
  if (schema.allOf?.[0]) return generatedValues(schema.allOf[0], options, depth);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (depth > MAX_DEPTH) return fc.constant(null);
  switch (type) {
    case "string":
      return stringArbitrary(schema);
    case "number":
      return numberArbitrary(schema, false);
    case "integer":
      return numberArbitrary(schema, true);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const items = schema.items ? schemaValues(schema.items, options, undefined, depth + 1) : fc.jsonValue({ maxDepth: 1 });
      const minLength = schema.minItems ?? 0;
      return fc.array(items, { minLength, maxLength: Math.max(minLength, Math.min(schema.maxItems ?? 3, 3)) });
    }
    case "object":
      return objectValues(schema, options, depth);
    default:
      // `{}`: anything (read-only fields a client may send back, free-form record values)
      return fc.jsonValue({ maxDepth: 1 });
  }
}

function objectValues(schema: JsonSchema, options: SchemaValueOptions, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, JsonSchema> = { ...schema.properties };
  const acceptsAny = schema.additionalProperties !== false && depth === 0;
  if (acceptsAny && options.extraProperties) Object.assign(properties, options.extraProperties);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) {
    // Read-only `{}` properties are rarely sent; the rest at will.
    if (Object.keys(property).length === 0 || (Object.keys(property).length === 1 && "description" in property)) {
      model[name] = fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) });
    } else {
      model[name] = schemaValues(property, options, name, depth + 1);
    }
  }
  const required = new Set([...(schema.required ?? []), ...(depth === 0 ? (options.alwaysProperties ?? []) : [])]);
  return fc
    .record(model, { requiredKeys: Object.keys(model).filter((name) => required.has(name)) })
    .map((value) => Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)));
}
