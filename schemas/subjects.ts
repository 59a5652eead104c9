/**
 * The subject map: every subject the platform publishes or subscribes to starts with `bc.` and is built here, so
 * `nats sub 'bc.>'` reads as the fleet's story and ARCHITECTURE.md's subject table has one source.
 */
export const Subjects = {
  /** Events of one aggregate instance: `bc.evt.metal.node.n1`. */
  aggregateEvents: (module: string, aggregate: string, id: string) => `bc.evt.${module}.${aggregate}.${id}`,
  /** Every event of a module: the filter a projector or `nats sub` uses. */
  moduleEvents: (module: string) => `bc.evt.${module}.>`,
  allEvents: 'bc.evt.>',
  /** Command request-reply: `bc.cmd.metal.enroll`. */
  command: (name: string) => `bc.cmd.${name}`,
  allCommands: 'bc.cmd.>',
  /** Step work: `bc.work.<executor>.<stepId>`, e.g. `bc.work.control-plane.power.setPower`. */
  work: (executor: string, stepId: string) => `bc.work.${executor}.${stepId}`,
  /** Commands for a site agent about one node's BMC: `bc.site.dc1.cmd.r1-n1`. */
  siteAgentCommands: (siteId: string, nodeId: string) => `bc.site.${siteId}.cmd.${nodeId}`,
  /** Everything a site agent consumes: its durable consumer's one filter. */
  siteAgentCommandFilter: (siteId: string) => `bc.site.${siteId}.cmd.>`,
  /** Commands for the ramdisk / node agent running inside one machine. */
  nodeAgentCommands: (siteId: string, nodeId: string) => `bc.site.${siteId}.node.${nodeId}.cmd`,
  /** A signed result, one subject per command so the waiting step can direct-get exactly its answer. */
  agentResult: (siteId: string, nodeId: string, commandId: string) => `bc.site.${siteId}.res.${nodeId}.${commandId}`,
  allAgentResults: 'bc.site.*.res.>',
  /** Control requests to a projector process (rebuild, status). */
  projectorControl: (projector: string, verb: 'rebuild' | 'status') => `bc.ctl.projector.${projector}.${verb}`,
} as const;

/** Stream names and the subjects each one captures. */
export const Streams = {
  events: { name: 'BC_EVENTS', subjects: ['bc.evt.>'] },
  /** Agent commands (kept 7 days: the audit of what reached which agent). */
  agentCommands: { name: 'BC_AGENT_COMMANDS', subjects: ['bc.site.*.cmd.>', 'bc.site.*.node.*.cmd'] },
  /** Signed agent results, verified by the control plane before they count. */
  agentResults: { name: 'BC_AGENT_RESULTS', subjects: ['bc.site.*.res.>'] },
  /** Step work for executors (work-queue retention: a message is gone once a worker acks it). */
  work: { name: 'BC_WORK', subjects: ['bc.work.>'] },
} as const;

/** Parses `bc.evt.<module>.<aggregate>.<id>` back into its parts; undefined for anything else. */
export function parseAggregateSubject(subject: string): { module: string; aggregate: string; id: string } | undefined {
  const parts = subject.split('.');
  if (parts.length !== 5 || parts[0] !== 'bc' || parts[1] !== 'evt') return undefined;
  return { module: parts[2]!, aggregate: parts[3]!, id: parts[4]! };
}
