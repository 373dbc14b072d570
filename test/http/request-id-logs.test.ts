import { logger } from "#shared/observability/powertools";
import { describe, expect, it, vi } from "vitest";
import { openApiRoutes } from "#functions/http/openapi/routes";
import { startGateway } from "#test/support/gateway-server";

// Its own file: Powertools keeps process-wide state (the invocation store, the log level), which other
// gateway tests in the same module instance would have changed before this one reads the logs.
describe("Request ids", () => {
  it("are the id every one of the request's log lines carries", async () => {
    // A request that went well logs nothing at INFO (the access log has it: shared/http/handler.ts);
    // at DEBUG it logs its received and completed lines (or `slow request`, WARN, on stderr), and
    // every line of the request carries its id.
    // The Powertools logger reads LOG_LEVEL once, when it loads (tests load it silent): set it on the logger.
    const before = logger.getLevelName();
    logger.setLogLevel("DEBUG");
    const written: string[] = [];
    const capture = (chunk: string | Uint8Array) => {
      written.push(
        ...String(chunk)
          .split("\n")
          .filter((line) => line.trim().startsWith("{")),
      );
      return true;
    };
    const spies = [
      vi.spyOn(process.stdout, "write").mockImplementation(capture),
      vi.spyOn(process.stderr, "write").mockImplementation(capture),
    ];
    try {
      const baseUrl = await startGateway([openApiRoutes.get]);
      const response = await fetch(`${baseUrl}/openapi.json`);
      expect(response.status).toBe(200);
      const requestId = response.headers.get("x-request-id") as string;
      expect(requestId).toBeTruthy();
      const requestLines = written
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.operationId === "getOpenApiDocument");
      expect(requestLines.map((line) => line.message)).toEqual([
        "request received",
        expect.stringMatching(/^(request completed|slow request)$/),
      ]);
      for (const line of requestLines) expect(line, String(line.message)).toMatchObject({ function_request_id: requestId });
    } finally {
      for (const spy of spies) spy.mockRestore();
      logger.setLogLevel(before);
    }
  });
});
