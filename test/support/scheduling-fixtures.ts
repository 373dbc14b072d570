import { apiClient, type ApiClient, newOrganizationId, tokenFor } from "#test/support/local-api";
import type { TokenClaims } from "#local/tokens";

/**
 * Routing schedules must name an existing configuration profile, which needs a hub: these create
 * them through the API for a test's organization (with an unrestricted client of that
 * organization, since a hub-restricted token may not create hubs).
 */
async function created(api: ApiClient, path: string, body: unknown): Promise<{ _id: string }> {
  const response = await api.post(path, body);
  if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/** A hub and `profileCount` configuration profiles on it. */
export async function createHubWithProfiles(organizationId: string, profileCount = 1, hubName = "Main hub") {
  const admin = apiClient(tokenFor({ organizationId }));
  const hub = await created(admin, "/hub", { name: hubName, address: "Jl. Sudirman 1, Jakarta", lat: -6.2, lng: 106.8 });
  const profiles: string[] = [];
  for (let i = 0; i < profileCount; i++) {
    profiles.push((await created(admin, "/routing/configuration", { name: `${hubName} plan ${i + 1}`, hubId: hub._id }))._id);
  }
  return { hubId: hub._id, profiles };
}

/** A fresh organization, a client for it (with `claims`), a hub and its profiles; `profile` is the first. */
export async function schedulingTenant(claims: Partial<TokenClaims> = {}, profileCount = 1) {
  const organizationId = newOrganizationId();
  const { hubId, profiles } = await createHubWithProfiles(organizationId, profileCount);
  return { organizationId, api: apiClient(tokenFor({ organizationId, ...claims })), hubId, profiles, profile: profiles[0] as string };
}
