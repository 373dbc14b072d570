import { logger } from "#shared/observability/powertools";
import { describe, expect, it, vi } from "vitest";
import { openApiRoutes } from "#functions/http/openapi/routes";
import { startGateway } from "#test/support/gateway-server";

// Its own file: Powertools keeps process-wide state (the invocation store, the log level), which other
// gateway tests in the same module instance would have changed before this one reads the logs.
describe("Request ids", () => {
  it("are the id the request's log lines carry", async () => {
    // The Powertools logger reads LOG_LEVEL once, when it loads (tests load it silent): set it on the logger.
    const before = logger.getLevelName();
    logger.setLogLevel("INFO");
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const baseUrl = await startGateway([openApiRoutes.get]);
      const response = await fetch(`${baseUrl}/openapi.json`);
      expect(response.status).toBe(200);
      const requestId = response.headers.get("x-request-id") as string;
      expect(requestId).toBeTruthy();
      expect(written.filter((line) => line.includes(requestId)).length).toBeGreaterThan(0);
    } finally {
      spy.mockRestore();
      logger.setLogLevel(before);
    }
  });
});
