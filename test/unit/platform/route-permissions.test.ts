import { describe, expect, it } from "vitest";
import { permissionSlugs, routes } from "#functions/routes";
import { buildOpenApiDocument } from "#shared/http/openapi";

const slugPattern = /^(view|add|edit|delete)\/[a-z-]+$/;

describe("Route table: permissions", () => {
  it("every route but the public OpenAPI document and its page declares a permission slug <verb>/<module>", () => {
    const publicRoutes = routes.filter((route) => route.auth === "none").map((route) => `${route.method} ${route.path}`);
    expect(publicRoutes).toEqual(["GET /openapi.json", "GET /docs"]);
    for (const route of routes.filter((candidate) => candidate.auth !== "none")) {
      expect(route.permission, `${route.method} ${route.path}`).toMatch(slugPattern);
    }
  });

  it("reads need view/…, creates add/…, updates edit/…, deletes delete/…", () => {
    for (const route of routes.filter((candidate) => candidate.auth !== "none")) {
      const verb = route.permission?.split("/")[0];
      const expected =
        route.method === "GET"
          ? "view"
          : route.method === "DELETE"
            ? "delete"
            : // POST /visit/{id}/proofs signs a driver's upload form: edit/visit-progress, like the progress it serves.
              route.method === "POST" && !/\}(\/dispatch|\/test|\/progress|\/proofs)?$/.test(route.path)
              ? "add"
              : "edit";
      expect(verb, `${route.method} ${route.path}`).toBe(expected);
    }
  });

  it("keeps the spec's routing-schedule slugs", () => {
    const bySlug = (operationId: string) => routes.find((route) => route.operationId === operationId)?.permission;
    expect(bySlug("listRoutingSchedules")).toBe("view/routing-schedule");
    expect(bySlug("getRoutingSchedule")).toBe("view/routing-schedule");
    expect(bySlug("createRoutingSchedule")).toBe("add/routing-schedule");
    expect(bySlug("replaceRoutingSchedule")).toBe("edit/routing-schedule");
    expect(bySlug("patchRoutingSchedule")).toBe("edit/routing-schedule");
    expect(bySlug("deleteRoutingSchedule")).toBe("delete/routing-schedule");
  });

  it("permissionSlugs (the token CLI's `all`) lists every slug once", () => {
    expect([...permissionSlugs].sort()).toEqual(
      [...new Set(routes.flatMap((route) => (route.permission ? [route.permission] : [])))].sort(),
    );
    expect(permissionSlugs).toContain("delete/app-integration");
  });

  it("the OpenAPI document shows each operation's permission (x-permission and the description)", () => {
    const document = buildOpenApiDocument(routes, { title: "t", version: "1", description: "d" });
    for (const route of routes.filter((candidate) => candidate.auth !== "none")) {
      const operation = (document.paths[route.path] as Record<string, any>)[route.method.toLowerCase()];
      expect(operation["x-permission"]).toBe(route.permission);
      expect(operation.description).toContain(`Requires permission \`${route.permission}\``);
      expect(operation.responses["403"].description).toContain("sys-035");
    }
  });
});
