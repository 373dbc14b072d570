import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { apiPathOwnersFile, currentPathOwners } from "#infra/api-path-owners";
import { pathOwners } from "#infra/api-paths";

describe("API path resources stay in the stack that first created them", () => {
  it("infra/api-path-owners.json records the owner of every path of the route table, and nothing else", () => {
    const recorded = JSON.parse(readFileSync(apiPathOwnersFile, "utf8")) as Record<string, string>;
    expect(recorded, "run `npm run api:owners` after adding or removing routes, and commit the file").toEqual(
      Object.fromEntries(currentPathOwners()),
    );
  });

  const routes = [
    { path: "/vehicle/{vehicleId}", area: "vehicles" },
    { path: "/routing/schedule", area: "routing-schedules" },
    { path: "/routing/result", area: "routing-results" },
  ];
  const recorded = Object.fromEntries(pathOwners(routes, {}));

  it("unrecorded: a path one area uses is that area's, a path several use is the root stack's", () => {
    expect(recorded).toEqual({
      "/routing": "root",
      "/routing/result": "routing-results",
      "/routing/schedule": "routing-schedules",
      "/vehicle": "vehicles",
      "/vehicle/{vehicleId}": "vehicles",
    });
  });

  it("a route another area adds under a recorded path leaves that path where it was; the new path is the adding area's", () => {
    const owners = pathOwners([...routes, { path: "/vehicle/{vehicleId}/visits", area: "visits" }], recorded);
    expect(owners.get("/vehicle")).toBe("vehicles");
    expect(owners.get("/vehicle/{vehicleId}")).toBe("vehicles");
    expect(owners.get("/vehicle/{vehicleId}/visits")).toBe("visits");
    // Without the record, the shared prefixes would move to the root stack.
    expect(pathOwners([...routes, { path: "/vehicle/{vehicleId}/visits", area: "visits" }], {}).get("/vehicle")).toBe("root");
  });

  it("a path whose recorded area has no routes left goes to the areas that use it now; removed paths are dropped", () => {
    const owners = pathOwners(
      [
        { path: "/vehicle/{vehicleId}/visits", area: "visits" },
        { path: "/routing/result", area: "routing-results" },
      ],
      recorded,
    );
    expect(Object.fromEntries(owners)).toEqual({
      "/routing": "root",
      "/routing/result": "routing-results",
      "/vehicle": "visits",
      "/vehicle/{vehicleId}": "visits",
      "/vehicle/{vehicleId}/visits": "visits",
    });
  });
});
