import { describe, expect, it } from "vitest";
import { type OpsAws, runOps } from "#local/ops";

const outputs = {
  SchedulerTickRuleName: "FieldOperations-SchedulerTickRule",
  RunQueueArn: "arn:run",
  RunSpilloverQueueArn: "arn:spill",
  DuePageQueueArn: "arn:due",
};
/** A stubbed stack: one rule, one mapping per queue, with the order of every change recorded. */
function stack(current: Record<string, string> = outputs) {
  const changes: string[] = [];
  const aws: OpsAws = {
    stackOutputs: async () => current,
    setRuleEnabled: async (rule, enabled) => {
      changes.push(`rule ${rule} ${enabled}`);
    },
    mappingsOf: async (arn) => [{ uuid: `mapping-of-${arn}`, state: "Enabled" }],
    setMappingEnabled: async (uuid, enabled) => {
      changes.push(`${uuid} ${enabled}`);
    },
  };
  return { aws, changes };
}

describe("npm run ops -- pause-runs|resume-runs --aws (stubbed AWS)", () => {
  it("pause: the tick's rule first (nothing new enqueued), then the run worker's three event sources", async () => {
    const { aws, changes } = stack();
    const lines = await runOps("pause-runs", { stackName: "FieldOperations" }, aws);
    expect(changes).toEqual([
      "rule FieldOperations-SchedulerTickRule false",
      "mapping-of-arn:run false",
      "mapping-of-arn:spill false",
      "mapping-of-arn:due false",
    ]);
    expect(lines).toHaveLength(4);
  });

  it("resume: the workers first, then the tick", async () => {
    const { aws, changes } = stack();
    await runOps("resume-runs", { stackName: "FieldOperations" }, aws);
    expect(changes).toEqual([
      "mapping-of-arn:run true",
      "mapping-of-arn:spill true",
      "mapping-of-arn:due true",
      "rule FieldOperations-SchedulerTickRule true",
    ]);
  });

  it("refuses a stack that predates the outputs, before changing anything", async () => {
    const { aws, changes } = stack({ RunQueueArn: "arn:run" });
    await expect(runOps("pause-runs", { stackName: "Old" }, aws)).rejects.toThrow(/no output SchedulerTickRuleName/);
    expect(changes).toEqual([]);
  });
});
