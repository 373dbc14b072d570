import { describe, expect, it } from "vitest";
import { permissionSlugs, routes } from "#functions/routes";
import { newId } from "#shared/domain/ids";
import { apiClient, newOrganizationId, tokenFor } from "#test/support/local-api";

/**
 * Every route but the OpenAPI document needs its permission slug: a token holding every other slug
 * is refused with 403 sys-035 before anything is read or validated (an unknown id would be 404,
 * a missing body 400).
 */
const guardedRoutes = routes.filter((route) => route.auth !== "none");
const pathWithUnknownIds = (path: string) => path.replace(/\{[^}]+\}/g, () => newId());

describe("Permissions: every route requires its slug", () => {
  it.each(guardedRoutes.map((route) => [`${route.method} ${route.path}`, route.permission, route] as const))(
    "%s without %s answers 403 sys-035",
    async (_name, permission, route) => {
      const organizationId = newOrganizationId();
      const withoutIt = apiClient(tokenFor({ organizationId, permissions: permissionSlugs.filter((slug) => slug !== permission) }));
      const response = await withoutIt.request(route.method, pathWithUnknownIds(route.path));
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ status: false, message: expect.any(String), failedCode: "sys-035" });
    },
  );

  it("a token with no permissions cannot delete single sign-on settings, hubs or data types, nor queue runs", async () => {
    const noPermissions = apiClient(tokenFor({ organizationId: newOrganizationId(), permissions: [] }));
    for (const [method, path] of [
      ["DELETE", `/app-integration/${newId()}`],
      ["DELETE", `/hub/${newId()}`],
      ["PATCH", `/data-type/${newId()}`],
      ["POST", "/routing/result"],
    ] as const) {
      const response = await noPermissions.request(method, path, method === "DELETE" ? {} : { body: {} });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body.failedCode).toBe("sys-035");
    }
  });
});
