import type { Plan } from "#shared/domain/tenants/plans";
import { GREAT_CIRCLE_PROVIDER, type TravelProviderDeclaration } from "#shared/domain/travel/providers";
import type { ElementsBudget } from "#shared/domain/travel/road-matrix";
import { type MeteredCounter, type ReservationStore, reserveWithinCap } from "#shared/domain/usage/reservations";
import { runQuotaResetsAt } from "#shared/domain/usage/run-quota";
import { utcMonth } from "#shared/domain/usage/schema";

/**
 * Road-engine spend per plan: which declared providers a plan may use, and the monthly dollar cap per
 * provider (the plan's `travelDollarsPerMonth` at the provider's declared `pricePer1000Elements`),
 * enforced as an element cap on a per-provider counter with the same reservation as the plan's
 * travel-elements cap: reserved before the engine is asked, settled with what it answered.
 */

/** The providers `plan` may use among `declared`, in the declared order (`greatCircle` always). */
export function allowedTravelProviders(plan: Plan, declared: readonly string[]): string[] {
  const listed = plan.travelProviders;
  return declared.filter((name) => name === GREAT_CIRCLE_PROVIDER || listed === undefined || listed.includes(name));
}

/** Why `plan` may not use `provider`, naming the providers it may use; undefined when it may. */
export function travelProviderRefusal(plan: Plan, declared: readonly string[], provider: string): string | undefined {
  const allowed = allowedTravelProviders(plan, declared);
  if (allowed.includes(provider)) return undefined;
  return `plan ${plan.name} does not include the travel provider ${provider}; it allows: ${allowed.join(", ")}`;
}

/**
 * The dollar cap of `provider` for `plan` as elements (rounded down: never a cent past the cap), with
 * the figures its refusal names; undefined when the plan names no cap for it or the operator declared no price.
 */
export function dollarCapElements(
  plan: Plan,
  provider: string,
  declaration: TravelProviderDeclaration,
): { dollars: number; pricePer1000: number; elements: number } | undefined {
  const dollars = plan.travelDollarsPerMonth?.[provider];
  const pricePer1000 = declaration.kind === "greatCircle" ? undefined : declaration.pricePer1000Elements;
  if (dollars === undefined || pricePer1000 === undefined || pricePer1000 === 0) return undefined;
  // The epsilon keeps $1 at $20 per 1,000 at 50 elements whatever the float division gives.
  return { dollars, pricePer1000, elements: Math.floor((dollars * 1000) / pricePer1000 + 1e-9) };
}

/** Dollars that `elements` cost at `pricePer1000`. */
export const elementDollars = (elements: number, pricePer1000: number) => (elements * pricePer1000) / 1000;

const money = (dollars: number) => `$${dollars.toFixed(2)}`;

export function dollarCapRefusal(
  plan: Plan,
  provider: string,
  cap: { dollars: number; pricePer1000: number; elements: number },
  usedElements: number,
  elements: number,
  now: Date,
): string {
  return (
    `Monthly spend cap reached for the travel provider ${provider}: plan ${plan.name} allows ${money(cap.dollars)} per month ` +
    `at ${money(cap.pricePer1000)} per 1,000 elements (${cap.elements} elements); ${usedElements} are used in ${utcMonth(now)} ` +
    `(${money(elementDollars(usedElements, cap.pricePer1000))}) and this run needs ${elements} more. ` +
    `The cap resets at ${runQuotaResetsAt(now).toISOString()}.`
  );
}

/** The month's per-provider element counter: one attribute per provider on the organization's month item. */
export const providerElementsAttribute = (provider: string) => `travelElements:${provider}`;

export interface TravelBudgetInput {
  store: ReservationStore;
  plan: Plan;
  provider: string;
  declaration: TravelProviderDeclaration;
  /** The plan's travel-elements counter (every provider). */
  planCounter: MeteredCounter;
  /** The provider's counter this month (its elements, what its dollar cap counts). */
  providerCounter: MeteredCounter;
  now: Date;
  /** The plan's travel-elements refusal (shared/domain/usage/run-quota.ts). */
  elementsRefusal(used: number, elements: number): string;
}

/**
 * Both caps as one budget: the plan's elements, then the provider's dollars; a refused second gives
 * the first back, so a refused run holds nothing. Settling charges what the engine answered to both.
 */
export function travelElementsBudget(input: TravelBudgetInput): ElementsBudget {
  const { store, plan, provider, planCounter, providerCounter, now } = input;
  const cap = dollarCapElements(plan, provider, input.declaration);
  return {
    async reserve(elements) {
      const planOutcome = await reserveWithinCap(store, planCounter, elements, plan.travelElementsPerMonth);
      if (!planOutcome.granted) return input.elementsRefusal(planOutcome.used, elements);
      const providerOutcome = await reserveWithinCap(store, providerCounter, elements, cap?.elements);
      if (providerOutcome.granted) return undefined;
      await store.settle(planCounter, elements, 0);
      return dollarCapRefusal(plan, provider, cap!, providerOutcome.used, elements, now);
    },
    async settle(reserved, answered) {
      await store.settle(planCounter, reserved, answered);
      await store.settle(providerCounter, reserved, answered);
    },
  };
}
