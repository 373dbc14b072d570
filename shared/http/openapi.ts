import * as z from "zod";
import type { ZodType } from "zod";
import { errorBodySchema, SERVER_SET_KEYWORD } from "#shared/domain/schemas";
import type { RouteDefinition } from "#shared/http/route";

/**
 * OpenAPI 3.1 generated from the route table and its zod schemas: the schemas that validate
 * requests are the schemas that document them.
 */
function jsonSchema(schema: ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any", override: showServerSetKeys }) as Record<
    string,
    unknown
  >;
  return rest;
}

/** A body that ignores server-set keys (ignoringServerSetKeys) lists them as readOnly properties. */
function showServerSetKeys({ jsonSchema }: { jsonSchema: Record<string, unknown> }) {
  const ignored = jsonSchema[SERVER_SET_KEYWORD];
  if (!Array.isArray(ignored)) return;
  delete jsonSchema[SERVER_SET_KEYWORD];
  const properties = (jsonSchema.properties ?? {}) as Record<string, unknown>;
  for (const key of ignored as string[]) {
    properties[key] ??= { readOnly: true, description: "Server-set: accepted so a body read by GET can be sent back, ignored, never stored." };
  }
  jsonSchema.properties = properties;
}

function parameters(schema: ZodType | undefined, location: "path" | "query") {
  if (!schema) return [];
  const object = jsonSchema(schema, "input") as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
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

export function buildOpenApiDocument(routes: readonly RouteDefinition[], info: { title: string; version: string; description: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.schema ? { content: { "application/json": { schema: jsonSchema(response.schema, "output") } } } : {}),
      };
    }
    for (const [status, description] of Object.entries(errorResponses)) {
      if (route.auth === "none" && status !== "500") continue;
      responses[status] ??= { description, content: { "application/json": { schema: jsonSchema(errorBodySchema, "output") } } };
    }
    if (route.permission) {
      const missingPermission = `The token lacks the \`${route.permission}\` permission (failedCode sys-035).`;
      const routeForbidden = responses["403"] as { description: string } | undefined;
      responses["403"] = routeForbidden
        ? { ...routeForbidden, description: `${missingPermission} Or: ${routeForbidden.description}` }
        : { description: missingPermission, content: { "application/json": { schema: jsonSchema(errorBodySchema, "output") } } };
    }
    const operation = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description || route.permission
        ? { description: [route.description, route.permission ? `Requires permission \`${route.permission}\`.` : undefined].filter(Boolean).join("\n\n") }
        : {}),
      ...(route.permission ? { "x-permission": route.permission } : {}),
      tags: [route.tag],
      security: route.auth === "none" ? [] : [{ bearerAuth: [] }],
      parameters: [...parameters(route.params, "path"), ...parameters(route.query, "query")],
      ...(route.body
        ? { requestBody: { required: true, content: { [route.bodyType ?? "application/json"]: { schema: jsonSchema(route.body, "input") } } } }
        : {}),
      responses,
    };
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info,
    servers: [{ url: "/v3" }],
    components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" } } },
    paths,
  };
}
