import { describe, expect, it } from "vitest";
import { newTenant } from "#test/support/local-api";

/** Edges of the HTTP contract every route shares: repeated query parameters. */
describe("A repeated query parameter", () => {
  it("is a 400 naming it (lists take one comma-separated value), on a route with and without a query schema", async () => {
    const { api } = newTenant();
    const listed = await api.get("/vehicles?limit=5&limit=10");
    expect(listed.status).toBe(400);
    expect(listed.body).toMatchObject({ status: false });
    expect(listed.body.errors).toEqual([expect.objectContaining({ field: "limit", message: expect.stringContaining("more than once") })]);

    const twoNames = await api.get("/hubs?cursor=a&cursor=b&limit=1&limit=2");
    expect(twoNames.status).toBe(400);
    expect(twoNames.body.errors.map((issue: { field: string }) => issue.field).sort()).toEqual(["cursor", "limit"]);

    const once = await api.get("/vehicles?limit=5");
    expect(once.status).toBe(200);
  });
});
