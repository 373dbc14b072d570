import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { eventTypes } from "#shared/domain/webhooks/events";
import { apiClient, baseUrl } from "#test/support/local-api";
import { chromiumMissing, chromiumPath, launchChromium, testOutputPath } from "#test/support/chromium";

/** GET /v3/docs: the API reference page, served by the API itself, as a browser shows it. */
describe("GET /docs: the API reference page", () => {
  it("is one HTML page that needs no token and loads nothing from elsewhere", async () => {
    const response = await apiClient(undefined).get("/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = response.body as string;
    expect(html).toMatch(/^<!doctype html>/);
    // No external script, style sheet or image: only inline elements.
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=/i);
    // The embedded document is the live one.
    const document = (await apiClient(undefined).get("/openapi.json")).body;
    expect(html).toContain(JSON.stringify(document.info.title));
  });

  it("carries a strict Content-Security-Policy: nothing loaded, only its own scripts by hash, calls only to the API", async () => {
    const response = await apiClient(undefined).get("/docs");
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("default-src 'none'");
    expect(policy).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+' 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(policy).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(policy).toContain("connect-src 'self'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("GET /openapi.json is cacheable: an ETag, Cache-Control, and 304 without a body on If-None-Match", async () => {
    const first = await fetch(`${baseUrl()}/openapi.json`);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(first.headers.get("cache-control")).toBe("public, max-age=300");
    expect(first.headers.get("x-content-type-options")).toBe("nosniff");
    await first.arrayBuffer();
    const again = await fetch(`${baseUrl()}/openapi.json`, { headers: { "If-None-Match": etag as string } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const stale = await fetch(`${baseUrl()}/openapi.json`, { headers: { "If-None-Match": '"another"' } });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();
  });

  it("is listed in the OpenAPI document as text/html without security", async () => {
    const document = (await apiClient(undefined).get("/openapi.json")).body;
    const operation = document.paths["/docs"].get;
    expect(operation.security).toEqual([]);
    expect(Object.keys(operation.responses["200"].content)).toEqual(["text/html"]);
  });
});

describe.skipIf(!chromiumPath)(
  chromiumPath ? "GET /docs in headless Chromium" : `GET /docs in headless Chromium: skipped, ${chromiumMissing}`,
  () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it("renders every operation of the route table without any request leaving the API", async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const foreignRequests: string[] = [];
      const apiOrigin = new URL(baseUrl()).origin;
      page.on("request", (request) => {
        const url = request.url();
        if (!url.startsWith(apiOrigin) && !url.startsWith("data:")) foreignRequests.push(url);
      });
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(error.message));

      // Hang guards, not speed checks: the page renders the whole OpenAPI document (~12 s here beside
      // three other files); at twice the usual load the page load alone passed Playwright's default 30 s.
      await page.goto(`${baseUrl()}/docs`, { timeout: 90_000 });
      await page.waitForSelector(".opblock", { timeout: 90_000 });
      const operations = await page.$$eval(".opblock", (blocks) =>
        blocks.map((block) => ({
          id: block.id,
          method: block.querySelector(".opblock-summary-method")?.textContent?.trim() ?? "",
          path: block.querySelector(".opblock-summary-path")?.getAttribute("data-path") ?? "",
          text: block.textContent ?? "",
        })),
      );
      // The document's webhooks section (the events a subscription receives) renders as operations too, named by event type.
      const webhookOperations = operations.filter(
        (operation) =>
          eventTypes.some((type) => operation.path === type || operation.text.includes(type)) && !operation.path.startsWith("/"),
      );
      expect(webhookOperations.length).toBe(eventTypes.length);
      const pathOperations = operations.filter((operation) => operation.path.startsWith("/"));
      for (const route of routes) {
        const shown = pathOperations.find((operation) => operation.text.includes(route.operationId));
        expect(shown, `${route.operationId} on the page`).toBeDefined();
        expect(shown?.method).toBe(route.method);
        expect(shown?.path).toBe(route.path);
      }
      expect(pathOperations).toHaveLength(routes.length);
      await page.screenshot({ path: testOutputPath("docs.png"), fullPage: false });
      expect(foreignRequests).toEqual([]);
      expect(pageErrors).toEqual([]);
    });
  },
);
