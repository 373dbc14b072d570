import * as z from "zod/mini";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "#functions/http/openapi/document";
import { routes } from "#functions/routes";
import { component } from "#shared/domain/schemas";
import { buildOpenApiDocument } from "#shared/http/openapi";
import type { RouteDefinition } from "#shared/http/route";
import { inlineRefs } from "#test/support/openapi-refs";

// Built once: rendering the whole document takes a while.
let built: ReturnType<typeof openApiDocument> | undefined;
const document = () => (built ??= openApiDocument());
const schemas = () => document().components.schemas as Record<string, Record<string, any>>;
const refsIn = (value: unknown) =>
  [...JSON.stringify(value).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1] as string);

describe("OpenAPI named components", () => {
  it("names every resource, its request bodies, the error envelope and every event payload", () => {
    expect(Object.keys(schemas())).toEqual(
      expect.arrayContaining([
        ...["Hub", "Vehicle", "Visit", "RoutingResult", "RoutingResultSummary", "RoutingConfiguration", "RoutingSchedule"],
        ...[
          "DataType",
          "DataTypeField",
          "DataTypeImport",
          "Record",
          "Webhook",
          "WebhookDelivery",
          "AppIntegration",
          "Usage",
          "ExtensionValues",
        ],
        ...[
          "HubInput",
          "HubPatch",
          "VehicleInput",
          "VisitInput",
          "RoutingConfigurationInput",
          "RoutingScheduleInput",
          "DataTypeInput",
          "RecordInput",
        ],
        "Error",
        ...["RoutingResultCompletedEvent", "RoutingResultFailedEvent", "RoutingResultDispatchedEvent", "RoutingScheduleSkippedEvent"],
        ...["DataTypeImportCompletedEvent", "DataTypeImportFailedEvent", "WebhookTestEvent"],
      ]),
    );
  });

  it("refers to them by $ref: every $ref names a component, every component is used", () => {
    const { components, ...rest } = document();
    const used = new Set(refsIn(rest));
    for (const schema of Object.values(components.schemas)) for (const name of refsIn(schema)) used.add(name);
    expect([...used].filter((name) => !(name in components.schemas))).toEqual([]);
    expect(Object.keys(components.schemas).filter((name) => !used.has(name))).toEqual([]);
    expect(JSON.stringify(document())).not.toContain("$defs");
  });

  it("answers and bodies are the components, errors the Error envelope narrowed to their failedCodes", () => {
    const paths = document().paths as Record<string, Record<string, any>>;
    const hub = paths["/hub/{hubId}"] as Record<string, any>;
    expect(hub.get.responses["200"].content["application/json"].schema.properties.data).toEqual({ $ref: "#/components/schemas/Hub" });
    expect(hub.put.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/HubInput" });
    expect(hub.patch.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/HubPatch" });
    expect(paths["/hubs"]?.get.responses["200"].content["application/json"].schema.properties.data.items).toEqual({
      $ref: "#/components/schemas/Hub",
    });
    expect(hub.get.responses["404"].content["application/json"].schema.allOf[0]).toEqual({ $ref: "#/components/schemas/Error" });
    expect(schemas().Error?.required).toEqual(["status", "message", "failedCode"]);
  });

  it("a data-type field requires `required` or `isRequired` (the title field neither), as the domain rule does", () => {
    const field = inlineRefs(document(), { $ref: "#/components/schemas/DataTypeFieldInput" });
    const alternatives = field.allOf[0].anyOf as Array<{ required: string[]; properties: Record<string, unknown> }>;
    expect(alternatives.map((alternative) => alternative.required)).toEqual([["required"], ["isRequired"], ["type"]]);
    expect(alternatives[2]?.properties.type).toEqual({ const: "title" });
    expect(field.properties.type.enum).toContain("title");
  });

  it("a schema registered with an id becomes a component; a different request form of it is <id>Input", () => {
    const Thing = component("Thing", z.object({ name: z.string(), size: z._default(z.number(), 1) }).check(z.describe("A thing.")));
    const route = {
      ...(routes.find((candidate) => candidate.operationId === "replaceHub") as RouteDefinition),
      operationId: "replaceThing",
      path: "/thing",
      permission: undefined,
      params: undefined,
      body: Thing,
      responses: () => ({ 200: { description: "The thing", schema: z.object({ data: Thing }) } }),
    } as RouteDefinition;
    const built = buildOpenApiDocument([route], { title: "t", version: "1", description: "d" });
    const things = built.components.schemas as Record<string, Record<string, any>>;
    expect(things.Thing).toMatchObject({ description: "A thing.", required: ["name", "size"] });
    expect(things.ThingInput).toMatchObject({ description: "A thing.", required: ["name"] });
    const operation = (built.paths["/thing"] as Record<string, any>).put;
    expect(operation.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ThingInput" });
    expect(operation.responses["200"].content["application/json"].schema.properties.data).toEqual({ $ref: "#/components/schemas/Thing" });
  });
});
