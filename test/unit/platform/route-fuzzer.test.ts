import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import type { RouteDefinition } from "#shared/http/route";
import { FixtureRef, RawJson, toJsonText, withOwnKey } from "#test/fuzz/json-text";
import { describeRequest, materialize, requestArbitrary } from "#test/fuzz/requests";
import { answerProblems, failureGroups, routeSeed } from "#test/fuzz/route-fuzzer";
import { storeChanges, type StoreSnapshot } from "#test/fuzz/store-oracle";

/** The route fuzzer's own parts: a checker that cannot see a broken answer would pass anything. */
const jsonRoute = routes.find((route) => route.operationId === "createVehicle") as RouteDefinition;
const answer = (status: number, body: unknown) => ({ status, text: JSON.stringify(body), json: body });

describe("Module: route fuzzer", () => {
  describe("Function: answerProblems", () => {
    it("accepts the product's envelopes", () => {
      const badRequest = {
        status: false,
        message: "Bad request - invalid parameters provided.",
        failedCode: "sys-400",
        errors: [{ field: "name", message: "must be a text of 1 to 100 characters" }],
      };
      expect(answerProblems(jsonRoute, answer(400, badRequest))).toEqual([]);
      expect(answerProblems(jsonRoute, answer(404, { status: false, message: "Data not found", failedCode: "sys-404" }))).toEqual([]);
      expect(answerProblems(jsonRoute, answer(201, { status: true, message: "Created", data: {} }))).toEqual([]);
    });

    it("names every broken envelope", () => {
      expect(answerProblems(jsonRoute, answer(502, { message: "Internal server error" }))).toEqual(["5xx"]);
      expect(answerProblems(jsonRoute, { status: 404, text: "Not Found", json: undefined })).toEqual(["error body is not a JSON object"]);
      expect(answerProblems(jsonRoute, answer(409, { message: "" }))).toEqual([
        "error envelope: status is not false",
        "error envelope: no message",
        "error envelope: no failedCode",
      ]);
      expect(answerProblems(jsonRoute, answer(400, { status: false, message: "Bad request", failedCode: "sys-400" }))).toEqual([
        "400 without an errors list",
      ]);
      expect(
        answerProblems(
          jsonRoute,
          answer(400, {
            status: false,
            message: "Bad",
            failedCode: "sys-400",
            errors: [{ field: "lat", message: "Invalid input: expected number, received string" }],
          }),
        ),
      ).toEqual(["raw validation-library text in an error message"]);
      expect(
        answerProblems(
          jsonRoute,
          answer(400, {
            status: false,
            message: "RangeError: Maximum call stack size exceeded",
            failedCode: "x",
            errors: [{ field: "a", message: "b" }],
          }),
        ),
      ).toEqual(["error body names internals"]);
      expect(answerProblems(jsonRoute, answer(200, { data: [] }))).toEqual(["success body without status: true"]);
    });
  });

  describe("Function: storeChanges", () => {
    const snapshot = (items: Record<string, string>, queueDepth = 0): StoreSnapshot => ({
      items: new Map(Object.entries(items)),
      objects: new Map(),
      queueDepth,
    });

    it("attributes added, changed and removed items to their organization, and a grown queue", () => {
      const before = snapshot({ "ORG#a VEH#1": "h1", "ORG#a#HUB#h VISIT#1": "h2", "ORG#b HUB#1": "h3" });
      const after = snapshot({ "ORG#a VEH#1": "h1*", "ORG#b HUB#1": "h3", "ORG#b#DT#x REC#1": "h4" }, 1);
      expect(storeChanges(before, after, ["a", "b"])).toEqual([
        { organizationId: "a", description: "item changed: ORG#a VEH#1" },
        { organizationId: "b", description: "item added: ORG#b#DT#x REC#1" },
        { organizationId: "a", description: "item removed: ORG#a#HUB#h VISIT#1" },
        { organizationId: "?", description: "run queue grew by 1" },
      ]);
      expect(storeChanges(before, before, ["a", "b"])).toEqual([]);
    });

    it("does not take one organization's items for another's whose id it begins with", () => {
      expect(storeChanges(snapshot({}), snapshot({ "ORG#ab VEH#1": "h" }), ["a", "ab"])).toEqual([
        { organizationId: "ab", description: "item added: ORG#ab VEH#1" },
      ]);
    });
  });

  describe("Function: toJsonText", () => {
    it("writes own __proto__ keys, -0, raw text and fixture ids", () => {
      const body = withOwnKey({ lat: -0 }, "__proto__", { polluted: true });
      expect(toJsonText([body, new RawJson("1e400", "big"), new FixtureRef("hubId")], () => "hub-1")).toBe(
        '[{"lat":-0,"__proto__":{"polluted":true}},1e400,"hub-1"]',
      );
    });
  });

  describe("Function: requestArbitrary", () => {
    it("generates, for every route, requests that materialize to bytes with every path parameter filled", () => {
      for (const route of routes) {
        for (const request of fc.sample(requestArbitrary(route), { seed: routeSeed(1, route.operationId), numRuns: 10 })) {
          const sent = materialize(request, (name) => `id-of-${name}`, "token");
          expect(sent.target, describeRequest(request)).not.toMatch(/\{\w+\}/);
          expect(sent.method).toBe(route.method);
        }
      }
    }, 60_000);

    it("is deterministic for a seed", () => {
      const route = routes.find((candidate) => candidate.operationId === "createRecord") as RouteDefinition;
      const describe = (seed: number) => fc.sample(requestArbitrary(route), { seed, numRuns: 20 }).map(describeRequest);
      expect(describe(5)).toEqual(describe(5));
    });
  });

  describe("Function: failureGroups", () => {
    it("groups by route, status and check, keeping the first example", () => {
      const failure = (runIndex: number, check = "5xx") => ({
        operationId: "getHub",
        check,
        status: 500,
        request: "GET /hub/x",
        labels: [],
        answer: "",
        seed: 1,
        runIndex,
      });
      const groups = failureGroups([failure(0), failure(1), failure(2, "4xx changed stored data")]);
      expect(groups.map(({ key, count, example }) => [key, count, example.runIndex])).toEqual([
        ["getHub 500 5xx", 2, 0],
        ["getHub 500 4xx changed stored data", 1, 2],
      ]);
    });
  });
});
