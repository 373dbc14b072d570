import { describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { openApiDocument } from "#functions/http/openapi/document";
import { declaredFailures } from "#shared/http/openapi";
import { RouteAnswerLog } from "#test/support/failed-code-observations";

type Operation = {
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }>; "x-failedCodes"?: string[] }>;
};
// Built once: rendering the whole document takes a while.
let document: ReturnType<typeof openApiDocument> | undefined;
const operation = (path: string, method: string) => {
  document ??= openApiDocument();
  return (document.paths[path] as Record<string, Operation>)[method] as Operation;
};

/** Every failedCode enum a response schema allows (a route's own body and the generic one under anyOf; the `Error` envelope narrowed under allOf). */
function failedCodesIn(schema: Record<string, unknown>): string[] {
  const bodies = ((schema.anyOf as Record<string, unknown>[] | undefined) ?? [schema]).flatMap(
    (body) => (body.allOf as Record<string, unknown>[] | undefined) ?? [body],
  );
  return bodies.flatMap((body) => {
    const failedCode = (body.properties as Record<string, { enum?: string[]; const?: string }> | undefined)?.failedCode;
    return failedCode?.enum ?? (failedCode?.const !== undefined ? [failedCode.const] : []);
  });
}

describe("OpenAPI errors follow the route table's failedCodes", () => {
  it("every error status of every route has a JSON schema whose failedCode lists exactly what the route declares", {
    timeout: 120_000,
  }, () => {
    for (const route of routes) {
      const responses = operation(route.path, route.method.toLowerCase()).responses;
      for (const [status, codes] of declaredFailures(route)) {
        const response = responses[String(status)];
        const schema = response?.content?.["application/json"]?.schema;
        expect(schema, `${route.operationId} ${status}`).toBeDefined();
        expect(new Set(failedCodesIn(schema as Record<string, unknown>)), `${route.operationId} ${status}`).toEqual(codes);
        expect(response?.["x-failedCodes"]).toEqual([...codes].sort());
      }
    }
  });

  it("record reads: the 403 is sys-035 (permission) or data-403 with restrictedFields; POST /data-type 409 has its schema", () => {
    const forbidden = operation("/data", "get").responses["403"]?.content?.["application/json"]?.schema as Record<string, unknown>;
    expect(failedCodesIn(forbidden)).toEqual(expect.arrayContaining(["sys-035", "data-403"]));
    expect(JSON.stringify(forbidden)).toContain("restrictedFields");
    const conflict = operation("/data-type", "post").responses["409"]?.content?.["application/json"]?.schema as Record<string, unknown>;
    expect(failedCodesIn(conflict).sort()).toEqual(["dt-001", "dt-002", "idem-409", "sys-410"]);
    const imports = operation("/data-type/import", "post").responses["429"]?.["x-failedCodes"];
    expect(imports).toEqual(expect.arrayContaining(["import-429", "import-quota-429"]));
  });

  it("the suites' answer log flags what a route does not declare, and nothing it declares", () => {
    const log = new RouteAnswerLog();
    log.record({ operationId: "listRecords", status: 200 });
    log.record({ operationId: "listRecords", status: 403, failedCode: "data-403" });
    log.record({ operationId: "listRecords", status: 403, failedCode: "sys-035" });
    log.record({ operationId: "createDataType", status: 409, failedCode: "dt-001" });
    expect(log.undeclared(routes)).toEqual([]);
    log.record({ operationId: "createDataType", status: 409, failedCode: "data-001" });
    log.record({ operationId: "listRecords", status: 418, failedCode: "sys-418" });
    log.record({ operationId: "listRecords", status: 204 });
    log.record({ operationId: "listRecords", status: 400 });
    expect(log.undeclared(routes)).toEqual([
      expect.stringMatching(/^GET \/data \(listRecords\) answered 204, a status its responses do not declare$/),
      expect.stringMatching(/^GET \/data \(listRecords\) answered 400 with failedCode \(none\)/),
      expect.stringMatching(/^GET \/data \(listRecords\) answered 418 sys-418, a status it does not declare$/),
      expect.stringMatching(
        /^POST \/data-type \(createDataType\) answered 409 with failedCode data-001, not among its declared dt-001, dt-002, idem-409/,
      ),
    ]);
  });
});
