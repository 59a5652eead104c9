import { createHmac, generateKeyPairSync, sign, verify } from 'node:crypto';
import { EventBatch } from '../../schemas/envelope.ts';

const key = Buffer.alloc(32, 7);
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const batch: EventBatch = {
  events: [0, 1].map((i) => ({
    type: 'StepSucceeded',
    version: 1,
    data: { workflowId: 'wf-reference', stepIndex: i, stepId: 'power.set', attempt: 1, output: { state: 'On', changed: true } },
    metadata: {
      eventId: `wf-reference-s${i}-a1-ok-0`,
      aggregateType: 'metal.workflow',
      aggregateId: 'wf-reference',
      commandId: `wf-reference-s${i}-a1-ok`,
      commandName: 'workflow.completeStep',
      correlationId: 'wf-reference',
      causationId: `wf-reference-s${i}-a1-ok`,
      actor: 'workflow-executor',
      time: '2026-12-05T00:00:00.000Z',
    },
  })),
};
const signature = sign(null, Buffer.from(JSON.stringify(batch)), privateKey);

function item(): number {
  const text = JSON.stringify(batch);
  const parsed = EventBatch.parse(JSON.parse(text));
  const mac = createHmac('sha256', key).update(text).digest();
  return parsed.events.length + mac[0]! + (verify(null, Buffer.from(text), publicKey, signature) ? 1 : 0);
}

let warm = false;

/** CPU µs per item of the reference work, over `items` items (the first call runs it optimised first). */
export function referenceMicrosPerItem(items = 1_000): number {
  if (!warm) for (let i = 0; i < 8 * items; i++) item();
  warm = true;
  const before = process.cpuUsage();
  let sink = 0;
  for (let i = 0; i < items; i++) sink += item();
  const used = process.cpuUsage(before);
  if (sink === 0) throw new Error('the reference work did nothing');
  return (used.user + used.system) / items;
}

export interface ReferenceWork {
  /** CPU µs per item of the reference work: median, fastest and slowest sample over the run. */
  microsPerItem: { median: number; min: number; max: number };
  samples: number;
}

/**
 * How fast the machine ran during a bench: a fixed piece of work like a control-plane step's (JSON, a zod parse, an
 * event MAC and an Ed25519 verify per item), timed in this process's CPU µs when the bench starts, every `intervalMs`
 * while it runs if given (about 90 ms of work each time, in the bench's own process), and when it ends. The same work
 * takes more CPU while the machine is busier (a shared VM's neighbours take cycles and caches, time stolen from a guest
 * counts as its own, and the run's own processes share the cores): on the 2-vCPU VM of 2026-12-05 it took 84-92 µs
 * idle and 84-199 µs during fleet runs, whose medians (103-134) moved with their CPU per step (2.91-3.62 ms for one
 * commit). Two runs' CPU figures on one machine compare better once each is divided by its median. Between machines
 * it does not hold: a faster one that afternoon measured 73-76 µs and 1.28-1.67 ms, since what differs most between
 * hosts (a wake-up of the nats-server across the VM, a socket write) is what this work leaves out.
 */
export class ReferenceSampler {
  readonly #samples = [referenceMicrosPerItem()];
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(intervalMs?: number) {
    if (intervalMs !== undefined) this.#timer = setInterval(() => this.#samples.push(referenceMicrosPerItem()), intervalMs);
  }

  stop(): ReferenceWork {
    clearInterval(this.#timer);
    this.#samples.push(referenceMicrosPerItem());
    return summariseReferenceWork(this.#samples);
  }
}

/** The median, fastest and slowest of the samples (µs per item), to a tenth. */
export function summariseReferenceWork(samples: readonly number[]): ReferenceWork {
  if (samples.length === 0) throw new Error('no reference work samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const median = Number.isInteger(middle) ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[Math.floor(middle)]!;
  const round = (n: number) => Math.round(n * 10) / 10;
  return { microsPerItem: { median: round(median), min: round(sorted[0]!), max: round(sorted.at(-1)!) }, samples: sorted.length };
}
