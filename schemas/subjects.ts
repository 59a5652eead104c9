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
  /** Control requests to a projector process (rebuild, status). */
  projectorControl: (projector: string, verb: 'rebuild' | 'status') => `bc.ctl.projector.${projector}.${verb}`,
} as const;

/** Stream names and the subjects each one captures. */
export const Streams = {
  events: { name: 'BC_EVENTS', subjects: ['bc.evt.>'] },
} as const;

/** Parses `bc.evt.<module>.<aggregate>.<id>` back into its parts; undefined for anything else. */
export function parseAggregateSubject(subject: string): { module: string; aggregate: string; id: string } | undefined {
  const parts = subject.split('.');
  if (parts.length !== 5 || parts[0] !== 'bc' || parts[1] !== 'evt') return undefined;
  return { module: parts[2]!, aggregate: parts[3]!, id: parts[4]! };
}
