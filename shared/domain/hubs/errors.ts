import { ConflictError, ValidationError } from "#shared/domain/errors";
import type { HubReferenceCounts } from "#shared/domain/hubs/schema";

/** A vehicle, visit or configuration profile named a hub that does not exist in the caller's organization. */
export function missingHubError(field = "hubId"): ValidationError {
  return ValidationError.single(field, "hubId must name an existing hub of your organization");
}

const nouns: Record<keyof HubReferenceCounts, [string, string]> = {
  vehicle: ["vehicle", "vehicles"],
  visit: ["visit", "visits"],
  configuration: ["configuration profile", "configuration profiles"],
};

/** Deleting a hub that something still names: the message says what to move or delete first. */
export function hubInUseError(counts: HubReferenceCounts): ConflictError {
  const parts = (Object.keys(nouns) as Array<keyof HubReferenceCounts>)
    .filter((kind) => counts[kind] > 0)
    .map((kind) => `${counts[kind]} ${nouns[kind][counts[kind] === 1 ? 0 : 1]}`);
  return new ConflictError(`The hub is still used by ${parts.join(", ")}; move or delete them before deleting the hub.`, "hub-409");
}
