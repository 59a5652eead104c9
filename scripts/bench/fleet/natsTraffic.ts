import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { commandNameOf } from '../../../schemas/commandPartitions.ts';
import { Subjects } from '../../../schemas/subjects.ts';

/**
 * Counts the NATS requests the system makes, by kind, from core subscriptions on the request subjects (a copy of
 * each is delivered to the bench; replies and stream deliveries are not counted): JetStream API calls
 * (`$JS.API.<verb>[.<stream>]`, e.g. direct gets of agent results), engine/operator commands (`bc.cmd.<name>`),
 * step work (`bc.work.>`), agent commands, agent results, heartbeats, trust requests and node log lines. Per step, these say where the round trips go.
 */
export class NatsTraffic {
  readonly counts = new Map<string, number>();
  readonly #subs: Subscription[] = [];

  constructor(nc: NatsConnection) {
    const watch = (subject: string, key: (s: string) => string) => {
      const sub = nc.subscribe(subject);
      this.#subs.push(sub);
      void (async () => {
        for await (const m of sub) {
          const k = key(m.subject);
          this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
        }
      })();
    };
    watch('$JS.API.>', (s) => {
      const parts = s.split('.');
      // $JS.API.DIRECT.GET.<stream>[.<subject>] / $JS.API.CONSUMER.CREATE.<stream>... / $JS.API.INFO
      if (parts[2] === 'DIRECT') return `js ${parts[2]}.${parts[3]} ${parts[4]}`;
      if (parts[2] === 'CONSUMER' && parts[3] === 'MSG') return `js CONSUMER.MSG.NEXT ${parts[5]}`;
      return `js ${parts.slice(2, 4).join('.')}${parts[4] && parts[2] !== 'INFO' ? ` ${parts[4]}` : ''}`;
    });
    for (const commands of [Subjects.allCommands, Subjects.allPartitionedCommands]) watch(commands, (s) => `cmd ${commandNameOf(s)}`);
    watch('bc.work.>', () => 'publish bc.work (step work)');
    watch('bc.site.*.cmd.>', () => 'publish agent command (site)');
    watch('bc.site.*.node.*.cmd', () => 'publish agent command (ramdisk)');
    // What agents send besides: results to the intake (a request each), heartbeats of agents inside machines, and the
    // trust requests (joins, registrations, boot tokens). Literal subjects, so an older tree's bench counts the same.
    watch('bc.site.*.res.>', () => 'request agent result (to the intake)');
    watch('bc.site.*.hb.*', () => 'publish agent heartbeat');
    watch('bc.trust.>', (s) => `request ${s.split('.').slice(0, 3).join('.')}`);
    watch('bc.site.*.log.>', (s) => `publish node log line (${s.split('.').pop()})`);
  }

  /** Counts per step, largest first. */
  perStep(steps: number): { kind: string; count: number; perStep: number }[] {
    return [...this.counts.entries()]
      .map(([kind, count]) => ({ kind, count, perStep: Math.round((100 * count) / Math.max(1, steps)) / 100 }))
      .sort((a, b) => b.count - a.count);
  }

  stop(): void {
    for (const s of this.#subs) s.unsubscribe();
  }
}
