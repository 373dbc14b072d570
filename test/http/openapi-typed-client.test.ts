import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { apiClient } from "#test/support/local-api";

/**
 * What a tenant integrator does: generate a typed client from the live `/v3/openapi.json` with
 * openapi-typescript and write a strict TypeScript program against its named schemas. The program
 * compiles, and its `@ts-expect-error` lines (bodies the server refuses) must each be an error.
 */
const program = `
import type { components, paths } from "./api";
type Schemas = components["schemas"];

export const hubLine = (hub: Schemas["Hub"]): string => \`\${hub.name}, \${hub.address} (\${hub.lat.toFixed(5)}, \${hub.lng.toFixed(5)}) \${hub.timeZone ?? "app zone"}\`;
export const vehicleHub = (vehicle: Schemas["Vehicle"]): string => \`\${vehicle.name} of \${vehicle.hubId}\`;
export const visitPlace = (visit: Schemas["Visit"]): string => \`\${visit.name} at \${visit.coordinate.lat},\${visit.coordinate.lng}: \${visit.status}\`;
export const stopCount = (result: Schemas["RoutingResult"]): number => result.routes.reduce((sum, route) => sum + route.trips.length, 0);
export const problem = (error: Schemas["Error"]): string =>
  \`\${error.failedCode}: \${error.message}\${(error.errors ?? []).map((issue) => \` \${issue.field} \${issue.message}\`).join("")}\`;
export const schedule = (one: Schemas["RoutingSchedule"]): string => one.periode;
export const profile = (one: Schemas["RoutingConfiguration"]): string => one.hubId;
export const dataType = (one: Schemas["DataType"]): number => one.fields.length;
export const record = (one: Schemas["Record"]): string => one.dataId;
export const webhook = (one: Schemas["Webhook"]): readonly string[] => one.events;
export const integration = (one: Schemas["AppIntegration"]): string => one.integrationType;
export const testEvent = (event: Schemas["WebhookTestEvent"]): string => \`\${event.type} \${event.data.webhookId}\`;

// The operations answer the named schemas.
type Json<T> = T extends { content: { "application/json": infer Body } } ? Body : never;
export const readHub = (answer: Json<paths["/hub/{hubId}"]["get"]["responses"][200]>): Schemas["Hub"] => answer.data;
export const readResult = (answer: Json<paths["/routing/result/{resultId}"]["get"]["responses"][200]>): Schemas["RoutingResult"] => answer.data;
export const refusal = (answer: Json<paths["/hub/{hubId}"]["get"]["responses"][404]>): Schemas["Error"] => answer;
export const hubBody: paths["/hub"]["post"]["requestBody"] = { content: { "application/json": { name: "Depot", address: "Main St 1", lat: 52.5, lng: 13.4 } } };

// A data-type field sends required or its synonym isRequired (the title field neither).
export const withRequired: Schemas["DataTypeFieldInput"] = { id: "size", title: "Size", type: "number", required: true };
export const withIsRequired: Schemas["DataTypeFieldInput"] = { id: "size", title: "Size", type: "number", isRequired: false };
export const titleField: Schemas["DataTypeFieldInput"] = { title: "Code", type: "title" };
// @ts-expect-error neither required nor isRequired: the server answers 400
export const neither: Schemas["DataTypeFieldInput"] = { id: "size", title: "Size", type: "number" };
// @ts-expect-error a hub's latitude is a number
export const latitudeText: string = ({} as Schemas["Hub"]).lat;
// @ts-expect-error a hub body needs its coordinates
export const noCoordinates: Schemas["HubInput"] = { name: "Depot", address: "Main St 1" };
`;

const directory = mkdtempSync(join(tmpdir(), "typed-client-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe("A typed client generated from /v3/openapi.json", () => {
  it("compiles a strict program using the named schemas (Hub, Vehicle, Visit, RoutingResult, Error, …)", { timeout: 120_000 }, async () => {
    const answer = await apiClient(undefined).get("/openapi.json");
    expect(answer.status).toBe(200);
    const schemas = Object.keys(answer.body.components.schemas);
    expect(schemas).toEqual(expect.arrayContaining(["Hub", "Vehicle", "Visit", "RoutingResult", "Error", "WebhookTestEvent"]));

    writeFileSync(join(directory, "api.ts"), astToString(await openapiTS(answer.body)));
    writeFileSync(join(directory, "program.ts"), program);
    const compiled = ts.createProgram([join(directory, "program.ts")], {
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      types: [],
    });
    const problems = ts.getPreEmitDiagnostics(compiled).map((diagnostic) => {
      const where =
        diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0;
      return `${diagnostic.file?.fileName.replace(directory, "")}:${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
    });
    expect(problems).toEqual([]);
  });
});
