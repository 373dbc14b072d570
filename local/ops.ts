/**
 * `npm run ops -- pause-runs|resume-runs --aws`: stop and restart routing runs on a deployed stack
 * without losing any (docs/operations.md, "Pause and resume runs"). Pausing disables the scheduler
 * tick's rule (no schedule is claimed, so due schedules stay due) and the run worker's event sources
 * on the run, spillover and due-page queues (queued runs wait there, kept 14 days); resuming enables
 * them again, and the next tick takes what fell due within the hour.
 */
export interface OpsAws {
  stackOutputs(stackName: string): Promise<Record<string, string>>;
  setRuleEnabled(ruleName: string, enabled: boolean): Promise<void>;
  /** The event source mappings reading a queue: their ids and whether they are enabled. */
  mappingsOf(queueArn: string): Promise<Array<{ uuid: string; state: string }>>;
  setMappingEnabled(uuid: string, enabled: boolean): Promise<void>;
}

export const opsCommands = ["pause-runs", "resume-runs"] as const;
export type OpsCommand = (typeof opsCommands)[number];

/** The run worker's queues, by their stack outputs. */
export const runQueueOutputs = ["RunQueueArn", "RunSpilloverQueueArn", "DuePageQueueArn"] as const;

export async function runOps(command: OpsCommand, options: { stackName: string }, aws: OpsAws): Promise<string[]> {
  const outputs = await aws.stackOutputs(options.stackName);
  const output = (name: string) => {
    const value = outputs[name];
    if (!value) throw new Error(`stack ${options.stackName} has no output ${name}: deploy this version first`);
    return value;
  };
  const enabled = command === "resume-runs";
  const lines: string[] = [];
  const rule = output("SchedulerTickRuleName");
  // Pause: the tick first (nothing new is enqueued), then the workers. Resume: workers first, then the tick.
  if (!enabled) {
    await aws.setRuleEnabled(rule, false);
    lines.push(`tick rule ${rule}: disabled`);
  }
  for (const name of runQueueOutputs) {
    const mappings = await aws.mappingsOf(output(name));
    if (mappings.length === 0) throw new Error(`no event source mapping reads ${output(name)}`);
    for (const mapping of mappings) {
      await aws.setMappingEnabled(mapping.uuid, enabled);
      lines.push(`${name.replace(/Arn$/, "")} event source ${mapping.uuid}: ${enabled ? "enabled" : "disabled"} (was ${mapping.state})`);
    }
  }
  if (enabled) {
    await aws.setRuleEnabled(rule, true);
    lines.push(`tick rule ${rule}: enabled`);
  }
  return lines;
}
