import { describe, expect, it } from "vitest";
import { tokenTimeProblem } from "#shared/http/authenticate";

describe("tokenTimeProblem", () => {
  const now = 1_800_000_000;
  const day = 86_400;
  it.each([
    ["a 12 h token", { iat: now, exp: now + day / 2 }, undefined],
    ["exactly the maximum", { iat: now, exp: now + day }, undefined],
    ["iat within the skew", { iat: now + 59, exp: now + 600 }, undefined],
    ["no iat, exp within the maximum from now", { exp: now + 3600 }, undefined],
    ["no exp", { iat: now }, "no exp"],
    ["iat a day ahead", { iat: now + day, exp: now + day + 60 }, "iat in the future"],
    ["nbf a day ahead", { iat: now, nbf: now + day, exp: now + 3600 }, "nbf in the future"],
    ["one second too long", { iat: now, exp: now + day + 1 }, "lifetime too long"],
    ["no iat, exp ten years away", { exp: now + 3650 * day }, "lifetime too long"],
    ["iat not a number", { iat: "yesterday", exp: now + 60 }, "iat is not a number"],
  ])("%s", (_name, payload, problem) => {
    expect(tokenTimeProblem(payload, now, day)).toBe(problem);
  });
});
