import { eventSchemas, eventTypes, webhookTestEventSchema } from "#shared/domain/webhooks/events";
import { toJSONSchema } from "zod/mini";
import type { core } from "zod/mini";
import { errorBodySchema, SERVER_SET_KEYWORD } from "#shared/domain/schemas";
import type { RouteDefinition } from "#shared/http/route";

/**
 * OpenAPI 3.1 generated from the route table and its zod schemas: the schemas that validate
 * requests are the schemas that document them.
 *
 * Named components: a zod schema registered with an `id` in zod's global registry
 * (`schema.register(z.globalRegistry, { id: "Hub" })`, next to the schema) is converted once into
 * `components.schemas.Hub` and every use of it is a `$ref` (zod extracts it as a `$def`; the
 * document moves the `$defs` of every conversion into `components.schemas`). A registered schema
 * whose request (input) form differs from its response (output) form gets `<id>Input` for the
 * request form. docs/architecture.md ("How to name a schema in the OpenAPI document").
 */
type JsonSchema = Record<string, unknown>;

const COMPONENTS = "#/components/schemas/";
const refsIn = (text: string) => [...text.matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g)].map((match) => match[1] as string);

/** The JSON Schemas of one document: converts zod schemas and collects their named components. */
class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};
  /** The output form of each id as zod writes it (refs still `#/$defs/…`), to tell whether its input form is the same. */
  private readonly outputForms = new Map<string, string>();
  private readonly componentTexts = new Map<string, string>();

  convert(schema: core.$ZodType, io: "input" | "output"): JsonSchema {
    const {
      $schema: _ignored,
      $defs,
      ...rest
    } = toJSONSchema(schema, {
      target: "draft-2020-12",
      io,
      unrepresentable: "any",
      override: showServerSetKeys,
    }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const defs = $defs ?? {};
    const names = this.namesOf(defs, io);
    const rewrite = (value: JsonSchema): JsonSchema =>
      JSON.parse(
        JSON.stringify(value).replaceAll(
          /"\$ref":"#\/\$defs\/([^"]+)"/g,
          (_all, id: string) => `"$ref":"${COMPONENTS}${names.get(id) ?? id}"`,
        ),
      );
    for (const [id, def] of Object.entries(defs)) this.keep(names.get(id) ?? id, rewrite(def));
    return rewrite(rest);
  }

  /** The component name of each `$def` of one conversion: its id, or `<id>Input` for an input form that differs from the output form. */
  private namesOf(defs: Record<string, JsonSchema>, io: "input" | "output"): Map<string, string> {
    const texts = new Map(Object.entries(defs).map(([id, def]) => [id, JSON.stringify(def)]));
    const names = new Map<string, string>();
    if (io === "output") {
      for (const [id, text] of texts) {
        const known = this.outputForms.get(id);
        if (known !== undefined && known !== text) throw new Error(`Two different schemas are registered as OpenAPI component "${id}"`);
        this.outputForms.set(id, text);
        names.set(id, id);
      }
      return names;
    }
    // An input form is the output form's component when it is written the same and so is every form it refers to.
    const same = new Map<string, boolean>();
    const isSame = (id: string): boolean => {
      const known = same.get(id);
      if (known !== undefined) return known;
      same.set(id, true); // a cycle refers to itself: decided by the rest
      const text = texts.get(id) ?? "";
      const result = this.outputForms.get(id) === text && refsIn(text).every(isSame);
      same.set(id, result);
      return result;
    };
    for (const id of texts.keys()) names.set(id, isSame(id) || !this.outputForms.has(id) ? id : `${id}Input`);
    return names;
  }

  private keep(name: string, schema: JsonSchema): void {
    const text = JSON.stringify(schema);
    const known = this.componentTexts.get(name);
    if (known !== undefined && known !== text) throw new Error(`Two different schemas are named OpenAPI component "${name}"`);
    this.componentTexts.set(name, text);
    this.components[name] = schema;
  }
}

/** The component a schema registered with `id` is written as (`{ $ref }`). */
const componentRef = (name: string) => ({ $ref: `${COMPONENTS}${name}` });

/** A body that ignores server-set keys (ignoringServerSetKeys) lists them as readOnly properties. */
function showServerSetKeys({ jsonSchema }: { jsonSchema: Record<string, unknown> }) {
  const ignored = jsonSchema[SERVER_SET_KEYWORD];
  if (!Array.isArray(ignored)) return;
  delete jsonSchema[SERVER_SET_KEYWORD];
  const properties = (jsonSchema.properties ?? {}) as Record<string, unknown>;
  for (const key of ignored as string[]) {
    properties[key] ??= {
      readOnly: true,
      description: "Server-set: accepted so a body read by GET can be sent back, ignored, never stored.",
    };
  }
  jsonSchema.properties = properties;
}

function parameters(converter: SchemaConverter, schema: core.$ZodType | undefined, location: "path" | "query") {
  if (!schema) return [];
  const object = converter.convert(schema, "input") as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === "path" || (object.required ?? []).includes(name),
    ...(typeof property.description === "string" ? { description: property.description } : {}),
    schema: property,
  }));
}

const errorResponses: Record<number, string> = {
  400: "Invalid input (`errors` names each field and rule); nothing was changed.",
  401: "Missing, malformed, expired or forged bearer token.",
  404: "Not found, or it belongs to another organization.",
  500: "Server error; the body never carries internals.",
};

/** Descriptions of the statuses every route of a kind may answer, when the route says nothing of them. */
const kindResponses: Record<number, string> = {
  403: "The organization may not call the API (not enrolled, suspended, no usage plan: the tenant authorizer) or the token lacks the permission.",
  412: "If-Match names another version than the resource's current one (failedCode sys-412); read it again and retry.",
  413: "The request body is larger than the route accepts (failedCode sys-413).",
  415: "The request body's Content-Type is not the route's (failedCode sys-415).",
  409: "The resource changed concurrently (failedCode sys-410): read it again and retry.",
  503: "The table is busy (failedCode sys-503): retry after the Retry-After seconds.",
  429: "Over the plan's request rate (failedCode sys-429) or its call quota (sys-429-quota): the usage plan of the organization's API key.",
};

/** The error envelope every refusal answers (errorBodySchema, component `Error`). */
const errorSchema = () => componentRef("Error");
const errorContent = () => ({ "application/json": { schema: errorSchema() } });

/** The tenant authorizer's refusals (shared/domain/tenants/access.ts, shared/http/gateway-responses.ts). */
const authorizerRefusals = ["sys-403", "tenant-403-key", "tenant-403-not-enrolled", "tenant-403-suspended", "tenant-403-plan"];

/**
 * Every failedCode a route may answer, by status: those every route of its kind answers (the
 * gateway's, the authorizer's and usage plan's for token routes, the request parsing's, the route
 * flags': idempotent, versioned) and the route's own, declared in the route table
 * (`responses[status].failedCodes`). The OpenAPI document lists them in each status's schema, and
 * the HTTP suites fail on an answer whose (route, status, failedCode) is not among them
 * (test/support/failed-code-observations.ts).
 */
export function declaredFailures(route: RouteDefinition): Map<number, Set<string>> {
  const codes = new Map<number, Set<string>>();
  const add = (status: number, ...list: string[]) => {
    const set = codes.get(status) ?? new Set<string>();
    for (const code of list) set.add(code);
    codes.set(status, set);
  };
  add(400, "sys-400");
  add(404, "sys-404");
  add(413, "sys-413");
  add(500, "sys-500");
  if (route.auth !== "none") {
    add(401, "sys-401");
    add(403, ...authorizerRefusals, "sys-035");
    add(429, "sys-429", "sys-429-quota");
    // The table pushed back (throttling, contention beyond the retries): retry after Retry-After.
    add(503, "sys-503");
    // A write that met a concurrent write of the same item.
    if (route.method !== "GET") add(409, "sys-410");
  }
  if (route.body) add(415, "sys-415");
  if (route.idempotent) {
    add(400, "idem-400");
    add(409, "idem-409");
    add(422, "idem-422");
  }
  if (route.versioned && route.method !== "GET") add(412, "sys-412");
  for (const [status, response] of Object.entries(route.responses())) {
    if (Number(status) >= 400) add(Number(status), ...(response.failedCodes ?? []));
  }
  return codes;
}

/** The error body of a status: the `Error` envelope with `failedCode` one of `codes`. */
function errorBodyWith(codes: ReadonlySet<string>): Record<string, unknown> {
  return { allOf: [errorSchema(), { type: "object", properties: { failedCode: { type: "string", enum: [...codes].sort() } } }] };
}

/**
 * The headers of the route flags: `idempotent` routes take Idempotency-Key (and answer
 * Idempotency-Replayed, 409 idem-409, 422 idem-422); `versioned` routes answer ETag, and their
 * writes take If-Match (412 sys-412). Adds the responses and returns the header parameters.
 */
function conditionalRequestHeaders(route: RouteDefinition, responses: Record<string, unknown>): Array<Record<string, unknown>> {
  const successes = Object.keys(responses).filter((status) => status.startsWith("2"));
  const addHeader = (name: string, header: Record<string, unknown>) => {
    for (const status of successes) {
      const response = responses[status] as { headers?: Record<string, unknown> };
      response.headers = { ...response.headers, [name]: header };
    }
  };
  const headers: Array<Record<string, unknown>> = [];
  if (route.idempotent) {
    headers.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        "Makes the request safe to retry: the same key with the same request within 24 hours answers the first answer again (same status and body, with `Idempotency-Replayed: true`) without doing the work twice. Keys are per organization and operation; a UUID is a good key. Answers kept: successes and 400/403/404/422 from the domain; not 409, 412, 429 or 5xx.",
      schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
    });
    addHeader("Idempotency-Replayed", {
      description: "`true` when this is the stored answer of an earlier request with the same Idempotency-Key.",
      schema: { type: "string", enum: ["true"] },
    });
    const inFlight = "A request with the same Idempotency-Key is still in flight (failedCode idem-409); retry later.";
    const earlier = responses["409"] as { description: string } | undefined;
    responses["409"] = earlier
      ? { ...earlier, description: `${earlier.description} Or: ${inFlight}` }
      : { description: inFlight, content: errorContent() };
    responses["422"] ??= {
      description: "The Idempotency-Key was already used with a different request (failedCode idem-422).",
      content: errorContent(),
    };
  }
  if (route.versioned) {
    const etag = {
      description: 'The resource\'s version as a strong ETag, e.g. `"3"`; send it back in If-Match to write only that version.',
      schema: { type: "string" },
    };
    if (route.method === "GET" || route.method === "PUT" || route.method === "PATCH" || route.method === "POST") addHeader("ETag", etag);
    if (route.method !== "GET") {
      headers.push({
        name: "If-Match",
        in: "header",
        required: false,
        description:
          "Optimistic concurrency (RFC 9110): proceed only if the resource is still at one of these ETags (from GET; a comma-separated list is allowed), or `*` for any existing version; 412 (failedCode sys-412) otherwise, also on a missing resource. Tags compare strongly: a weak tag never matches. A header that is neither `*` nor a list of quoted tags is a 400. Without it the write is unconditional.",
        schema: { type: "string" },
      });
      responses["412"] ??= {
        description:
          "If-Match names no current version of the resource, or the resource does not exist (failedCode sys-412); read it again and retry.",
        content: errorContent(),
      };
    }
  }
  return headers;
}

const isErrorBodySchema = (schema: Record<string, unknown>) => JSON.stringify(schema) === JSON.stringify(errorSchema());

export function buildOpenApiDocument(routes: readonly RouteDefinition[], info: { title: string; version: string; description: string }) {
  const converter = new SchemaConverter();
  const jsonSchema = (schema: core.$ZodType, io: "input" | "output") => converter.convert(schema, io);
  // Response (output) forms first, so a request (input) form is told apart from the response form of the same component.
  if (JSON.stringify(jsonSchema(errorBodySchema, "output")) !== JSON.stringify(errorSchema()))
    throw new Error('errorBodySchema must be registered as OpenAPI component "Error"');
  const answers = new Map(routes.map((route) => [route, route.responses()]));
  const outputForms = new Map<core.$ZodType, JsonSchema>();
  for (const responseTable of answers.values())
    for (const response of Object.values(responseTable))
      for (const schema of [response.schema, ...Object.values(response.alternatives ?? {})])
        if (schema && !outputForms.has(schema)) outputForms.set(schema, jsonSchema(schema, "output"));
  const webhooks = webhookOperations(converter);
  const outputForm = (schema: core.$ZodType) => outputForms.get(schema) ?? jsonSchema(schema, "output");
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(answers.get(route) ?? {})) {
      const content: Record<string, unknown> = {};
      if (response.schema || response.contentType) {
        content[response.contentType ?? "application/json"] = {
          schema: response.schema ? outputForm(response.schema) : { type: "string" },
        };
      }
      for (const [mediaType, schema] of Object.entries(response.alternatives ?? {})) content[mediaType] = { schema: outputForm(schema) };
      responses[status] = { description: response.description, ...(Object.keys(content).length > 0 ? { content } : {}) };
    }
    for (const [status, description] of Object.entries(errorResponses)) {
      if (route.auth === "none" && status !== "500") continue;
      responses[status] ??= { description, content: errorContent() };
    }
    if (route.permission) {
      const missingPermission = `The token lacks the \`${route.permission}\` permission (failedCode sys-035).`;
      const routeForbidden = responses["403"] as { description: string } | undefined;
      responses["403"] = routeForbidden
        ? { ...routeForbidden, description: `${missingPermission} Or: ${routeForbidden.description}` }
        : { description: missingPermission, content: errorContent() };
    }
    const headerParameters = conditionalRequestHeaders(route, responses);
    // Every error status the route may answer, with the failedCodes it may carry in its schema.
    for (const [status, codes] of declaredFailures(route)) {
      const key = String(status);
      const documented = responses[key] as
        | { description: string; content?: Record<string, { schema: Record<string, unknown> }> }
        | undefined;
      const own = documented?.content?.["application/json"]?.schema;
      const generic = errorBodyWith(codes);
      // A route's own error schema (e.g. 403 data-403 with restrictedFields) is one of the bodies; the generic body covers the other codes.
      const schema = own && !isErrorBodySchema(own) ? { anyOf: [own, generic] } : generic;
      responses[key] = {
        description: documented?.description ?? errorResponses[status] ?? kindResponses[status] ?? "Refused (see failedCode).",
        content: { ...documented?.content, "application/json": { schema } },
        "x-failedCodes": [...codes].sort(),
      };
    }
    const operation = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description || route.permission
        ? {
            description: [route.description, route.permission ? `Requires permission \`${route.permission}\`.` : undefined]
              .filter(Boolean)
              .join("\n\n"),
          }
        : {}),
      ...(route.permission ? { "x-permission": route.permission } : {}),
      tags: [route.tag],
      security: route.auth === "none" ? [] : [{ bearerAuth: [] }],
      parameters: [...parameters(converter, route.params, "path"), ...parameters(converter, route.query, "query"), ...headerParameters],
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { [route.bodyType ?? "application/json"]: { schema: jsonSchema(route.body, "input") } },
            },
          }
        : {}),
      responses,
    };
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info,
    servers: [{ url: "/v3" }],
    components: {
      schemas: Object.fromEntries(Object.entries(converter.components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
    },
    paths,
    webhooks,
  };
}

/** The OpenAPI 3.1 `webhooks` section: one operation per event, the POST a subscription receives (and `webhook.test`, sent to one subscription on request). */
function webhookOperations(converter: SchemaConverter): Record<string, unknown> {
  const header = (description: string) => ({ in: "header", required: true, description, schema: { type: "string" } });
  return Object.fromEntries(
    [...eventTypes.map((type) => [type, eventSchemas[type]] as const), ["webhook.test", webhookTestEventSchema] as const].map(
      ([type, zodSchema]) => {
        const schema = converter.convert(zodSchema, "output");
        const description = converter.components[String(schema.$ref).slice(COMPONENTS.length)]?.description ?? schema.description;
        return [
          type,
          {
            post: {
              operationId: `webhook_${type.replaceAll(/[.-]/g, "_")}`,
              summary: type,
              description:
                `${typeof description === "string" ? description : ""} Signed per Standard Webhooks (docs/api/webhooks.md); retried until a 2xx answer, 410 disables the subscription.`.trim(),
              tags: ["Webhooks"],
              parameters: [
                { name: "webhook-id", ...header("The event's id: the same on every retry (deduplicate by it).") },
                { name: "webhook-timestamp", ...header("Unix seconds of this attempt; reject it when far from now (replays).") },
                {
                  name: "webhook-signature",
                  ...header(
                    "`v1,<base64 HMAC-SHA256 of id.timestamp.body>` under the subscription's secret (`whsec_…`, base64 after the prefix).",
                  ),
                },
              ],
              requestBody: { required: true, content: { "application/json": { schema } } },
              responses: {
                "2XX": { description: "Received; any other answer is retried by the schedule (410: the subscription is disabled)." },
              },
            },
          },
        ];
      },
    ),
  );
}
