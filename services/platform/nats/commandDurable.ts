import { AckPolicy, DeliverPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { Streams } from '../../../schemas/subjects.ts';

const ns = (ms: number) => ms * 1_000_000;

/**
 * A per-boot durable outlives its ramdisk by this much, then the server removes it: every boot makes a new one, and
 * a powered-off machine's would otherwise collect every later command of its node forever.
 */
const PER_BOOT_INACTIVE_MS = 60 * 60 * 1000;

export interface CommandDurable {
  durable: string;
  filterSubject: string;
  /** `all`: a site agent's durable, kept across restarts. `new`: one boot's, seeing only what is sent after it exists. */
  deliver: 'all' | 'new';
  ackWaitMs: number;
}

/** Creates the agent command durable on BC_AGENT_COMMANDS, or brings its ack wait and filter up to date. */
export async function ensureCommandDurable(jsm: JetStreamManager, spec: CommandDurable): Promise<void> {
  const stream = Streams.agentCommands.name;
  const config = {
    ack_wait: ns(spec.ackWaitMs),
    max_ack_pending: 256,
    filter_subject: spec.filterSubject,
    ...(spec.deliver === 'new' ? { inactive_threshold: ns(PER_BOOT_INACTIVE_MS) } : {}),
  };
  const existing = await jsm.consumers.info(stream, spec.durable).catch(() => undefined);
  if (!existing) {
    const deliver_policy = spec.deliver === 'new' ? DeliverPolicy.New : DeliverPolicy.All;
    await jsm.consumers.add(stream, { durable_name: spec.durable, ack_policy: AckPolicy.Explicit, deliver_policy, ...config });
  } else if (existing.config.ack_wait !== config.ack_wait || existing.config.filter_subject !== config.filter_subject) {
    await jsm.consumers.update(stream, spec.durable, config);
  }
}
