import {
  type APIGatewayClient,
  CreateUsagePlanKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetUsagePlansCommand,
} from "@aws-sdk/client-api-gateway";
import { describe, expect, it } from "vitest";
import { historyAfterMove, plansDuring } from "#shared/domain/tenants/plan-history";
import type { Tenant } from "#shared/domain/tenants/plans";
import { apiGatewayKeys } from "#shared/tenancy/api-gateway-keys";

/**
 * `set-plan` on AWS against a stubbed API Gateway (pure logic of the order of calls; the real
 * service is not reachable here): the key's usage-plan associations after a move, a failed step,
 * and a repair. `oneUsagePlanPerStage` models API Gateway refusing a second plan on the same stage.
 */
function stubGateway(options: { oneUsagePlanPerStage: boolean; failAttachTo?: string; attachedTo: string[] }) {
  const usagePlans = [
    { id: "up-free", name: "FieldOperations-free" },
    { id: "up-standard", name: "FieldOperations-standard" },
    { id: "up-gold", name: "FieldOperations-gold" },
  ];
  const attached = new Set(options.attachedTo);
  const calls: string[] = [];
  const client = {
    send: async (command: unknown) => {
      if (command instanceof GetUsagePlansCommand) {
        const { keyId } = command.input;
        return { items: keyId ? usagePlans.filter((plan) => attached.has(plan.id)) : usagePlans };
      }
      if (command instanceof CreateUsagePlanKeyCommand) {
        const id = command.input.usagePlanId as string;
        calls.push(`attach ${id}`);
        if (id === options.failAttachTo) throw Object.assign(new Error("throttled"), { name: "TooManyRequestsException" });
        if (options.oneUsagePlanPerStage && attached.size > 0)
          throw Object.assign(new Error("already associated with a usage plan on this stage"), { name: "ConflictException" });
        attached.add(id);
        return {};
      }
      if (command instanceof DeleteUsagePlanKeyCommand) {
        calls.push(`detach ${command.input.usagePlanId}`);
        attached.delete(command.input.usagePlanId as string);
        return {};
      }
      throw new Error(`unexpected command ${(command as object).constructor.name}`);
    },
  } as unknown as APIGatewayClient;
  return { client, attached, calls };
}

const tenant = (plan: string): Tenant => ({
  organizationId: "org-1",
  plan,
  status: "active",
  apiKeyId: "key-1",
  apiKeyValue: "value-1",
  createdTime: "2026-01-01T00:00:00.000Z",
  updatedTime: "2026-01-01T00:00:00.000Z",
});

describe("set-plan on AWS (stubbed API Gateway)", () => {
  it.each([true, false])(
    "moves a key from free to standard, ending on exactly one plan (one plan per stage: %s)",
    async (oneUsagePlanPerStage) => {
      const gateway = stubGateway({ oneUsagePlanPerStage, attachedTo: ["up-free"] });
      await apiGatewayKeys("FieldOperations", gateway.client).move(tenant("free"), "standard");
      expect([...gateway.attached]).toEqual(["up-standard"]);
    },
  );

  it("leaves the key on its old plan when attaching to the new one fails first", async () => {
    const gateway = stubGateway({ oneUsagePlanPerStage: false, failAttachTo: "up-standard", attachedTo: ["up-free"] });
    await expect(apiGatewayKeys("FieldOperations", gateway.client).move(tenant("free"), "standard")).rejects.toThrow("throttled");
    expect([...gateway.attached]).toEqual(["up-free"]);
    expect(gateway.calls).toEqual(["attach up-standard"]);
  });

  it("puts the key back on its old plan when the attach after the detach fails (one plan per stage)", async () => {
    const gateway = stubGateway({ oneUsagePlanPerStage: true, attachedTo: ["up-free"] });
    let attempts = 0;
    const send = gateway.client.send.bind(gateway.client);
    // The first attach meets the conflict; the second (after the detach) fails on its own.
    (gateway.client as { send: unknown }).send = async (command: unknown) => {
      if (command instanceof CreateUsagePlanKeyCommand && command.input.usagePlanId === "up-standard" && ++attempts === 2)
        throw Object.assign(new Error("throttled"), { name: "TooManyRequestsException" });
      return send(command as never);
    };
    await expect(apiGatewayKeys("FieldOperations", gateway.client).move(tenant("free"), "standard")).rejects.toThrow("throttled");
    expect([...gateway.attached]).toEqual(["up-free"]);
    expect(gateway.calls).toEqual(["attach up-standard", "detach up-free", "attach up-free"]);
  });

  it("repairs: set-plan to the tenant's own plan reattaches a key whose usage plan association is missing", async () => {
    const gateway = stubGateway({ oneUsagePlanPerStage: true, attachedTo: [] });
    await apiGatewayKeys("FieldOperations", gateway.client).move(tenant("standard"), "standard");
    expect([...gateway.attached]).toEqual(["up-standard"]);
  });

  it("repairs a key left on two plans, and does nothing to a key already right", async () => {
    const twice = stubGateway({ oneUsagePlanPerStage: false, attachedTo: ["up-free", "up-standard"] });
    await apiGatewayKeys("FieldOperations", twice.client).move(tenant("standard"), "standard");
    expect([...twice.attached]).toEqual(["up-standard"]);
    const right = stubGateway({ oneUsagePlanPerStage: true, attachedTo: ["up-standard"] });
    await apiGatewayKeys("FieldOperations", right.client).move(tenant("standard"), "standard");
    expect(right.calls).toEqual([]);
  });

  it("moves a tenant whose plan was removed (its usage plan deleted, the key on none) to the default plan", async () => {
    const gateway = stubGateway({ oneUsagePlanPerStage: true, attachedTo: [] });
    await apiGatewayKeys("FieldOperations", gateway.client).move(tenant("platinum"), "standard");
    expect([...gateway.attached]).toEqual(["up-standard"]);
  });
});

describe("plan history", () => {
  const enrolled = { ...tenant("free"), planHistory: [{ plan: "free", from: "2026-01-01T00:00:00.000Z" }] };

  it("closes the open period and opens one on a move; a move to the same plan changes nothing", () => {
    const history = historyAfterMove(enrolled, "standard", "2026-02-10T12:00:00.000Z");
    expect(history).toEqual([
      { plan: "free", from: "2026-01-01T00:00:00.000Z", to: "2026-02-10T12:00:00.000Z" },
      { plan: "standard", from: "2026-02-10T12:00:00.000Z" },
    ]);
    expect(historyAfterMove({ ...enrolled, plan: "standard", planHistory: history }, "standard", "2026-03-01T00:00:00.000Z")).toBe(history);
  });

  it("names every plan of a period, and a record without history its current plan", () => {
    const moved = { ...enrolled, plan: "standard", planHistory: historyAfterMove(enrolled, "standard", "2026-02-10T12:00:00.000Z") };
    expect(plansDuring(moved, "2026-02-01", "2026-02-28")).toEqual(["free", "standard"]);
    expect(plansDuring(moved, "2026-01-01", "2026-01-31")).toEqual(["free"]);
    expect(plansDuring(moved, "2026-03-01", "2026-03-31")).toEqual(["standard"]);
    expect(plansDuring(tenant("gold"), "2026-03-01", "2026-03-31")).toEqual(["gold"]);
  });
});
