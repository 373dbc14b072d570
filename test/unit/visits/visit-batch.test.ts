import { describe, expect, it } from "vitest";
import { visitRoutes } from "#functions/http/visits/routes";
import type { Caller } from "#shared/domain/caller";
import { ValidationError } from "#shared/domain/errors";
import { createVisitBatch, visitBatchItemFailures } from "#shared/domain/visits/batch";
import type { Visit } from "#shared/domain/visits/schema";
import { declaredFailures } from "#shared/http/openapi";

const caller = { organizationId: "org" } as Caller;

describe("Function: createVisitBatch", () => {
  it("validates each item on its own, keeps the items' order and holds at most `concurrency` creates at once", async () => {
    // Prepare
    let inFlight = 0;
    let most = 0;
    const create = async (_caller: Caller, input: { name: string }) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, input.name.length % 3));
      inFlight--;
      if (input.name === "refused") throw ValidationError.single("hubId", "no such hub");
      return { _id: input.name } as unknown as Visit;
    };
    const items: unknown[] = Array.from({ length: 25 }, (_, i) => ({ hubId: "h", name: `v${i}`, coordinate: "1,2" }));
    items[4] = { name: "no hub" };
    items[9] = { hubId: "h", name: "refused", coordinate: "1,2" };
    // Act
    const outcomes = await createVisitBatch(create as never, caller, items, 3);
    // Assess
    expect(most).toBe(3);
    expect(outcomes.map((outcome) => outcome.index)).toEqual(items.map((_, i) => i));
    expect(outcomes.filter((outcome) => "error" in outcome).map((outcome) => outcome.index)).toEqual([4, 9]);
    expect((outcomes[4] as { error: ValidationError }).error.errors.map((issue) => issue.field)).toEqual(["hubId", "coordinate"]);
    expect(outcomes[0]).toEqual({ index: 0, visit: { _id: "v0" } });
  });
});

describe("Constant: visitBatchItemFailures", () => {
  it("names only answers POST /visit declares, so an item answers nothing the single route could not", () => {
    const single = declaredFailures(visitRoutes.create);
    for (const [status, codes] of Object.entries(visitBatchItemFailures)) {
      for (const code of codes) expect(single.get(Number(status))?.has(code), `${status} ${code}`).toBe(true);
    }
  });
});
