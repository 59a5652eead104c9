import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { AgentCommand } from '../../../schemas/agent/agentCommand.ts';
import type { HostModuleObservation } from '../../../schemas/agent/hostModuleObservation.ts';
import type { RolloutController } from '../../../services/processes/rolloutController/rolloutController.ts';

/**
 * What the bench hears while rollouts run, each with the time it heard it: the `module.apply` commands the controller
 * sends (by version, then host), the hosts' results for them, the rollout events, and every host observation the
 * controller folds from a verified heartbeat.
 */
export class FleetWatch {
  /** version → host → when its first `module.apply` for that version was published; `applies` counts every publish. */
  readonly applySent = new Map<string, Map<string, number>>();
  readonly applies = new Map<string, number>();
  /** version → host → the `commandId` of its first `module.apply` for that version. */
  readonly applyId = new Map<string, Map<string, string>>();
  /** commandId → when the host's first result for it was published (a host re-sends one the intake did not answer). */
  readonly resultAt = new Map<string, number>();
  /** rollout event type → when each was heard (oldest first). */
  readonly events = new Map<string, number[]>();
  /** Heartbeats the controller verified and folded, with when. */
  readonly observed: number[] = [];
  /** host → its latest observation, and when it first reported each version active with passing probes. */
  readonly latest = new Map<string, HostModuleObservation>();
  readonly healthyAt = new Map<string, number>();
  /** `version host` → when the controller first heard the host report that version, in any state. */
  readonly reportedAt = new Map<string, number>();
  readonly #subs: Subscription[] = [];

  constructor(nc: NatsConnection) {
    this.#subs.push(
      nc.subscribe('bc.site.*.node.*.cmd', {
        callback: (_err, msg) => {
          const command = AgentCommand.parse(msg.json());
          if (command.kind !== 'module.apply') return;
          const version = (command.params as { version: string }).version;
          const byHost = this.applySent.get(version) ?? new Map<string, number>();
          this.applySent.set(version, byHost);
          if (!byHost.has(command.nodeId)) {
            byHost.set(command.nodeId, Date.now());
            const ids = this.applyId.get(version) ?? new Map<string, string>();
            this.applyId.set(version, ids.set(command.nodeId, command.commandId));
          }
          this.applies.set(`${version} ${command.nodeId}`, (this.applies.get(`${version} ${command.nodeId}`) ?? 0) + 1);
        },
      }),
      nc.subscribe('bc.site.*.res.>', {
        callback: (_err, msg) => {
          const commandId = msg.subject.split('.')[5]!;
          if (!this.resultAt.has(commandId)) this.resultAt.set(commandId, Date.now());
        },
      }),
      nc.subscribe('bc.evt.*.rollout.>', {
        callback: (_err, msg) => {
          for (const e of msg.json<{ events: { type: string }[] }>().events) this.events.set(e.type, [...(this.events.get(e.type) ?? []), Date.now()]);
        },
      }),
    );
  }

  /** Records what `controller` folds from heartbeats, without changing what it does with them. */
  listen(controller: RolloutController): void {
    const fold = controller.model.apply.bind(controller.model);
    controller.model.apply = (input) => {
      if (input.type === 'observed') {
        const o = input.observation;
        this.observed.push(Date.now());
        this.latest.set(o.host, o);
        const key = `${o.version} ${o.host}`;
        if (!this.reportedAt.has(key)) this.reportedAt.set(key, Date.now());
        if (o.state === 'active' && o.probes.every((p) => p.ok) && !this.healthyAt.has(key)) this.healthyAt.set(key, Date.now());
      }
      fold(input);
    };
  }

  /** Hosts other than `canary` that were sent any `module.apply` for `version`. */
  touchedBeyond(version: string, canary: string): string[] {
    return [...(this.applySent.get(version)?.keys() ?? [])].filter((host) => host !== canary);
  }

  /** When `host` published its first result for its `module.apply` of `version`. */
  resultOf(version: string, host: string): number | undefined {
    const id = this.applyId.get(version)?.get(host);
    return id === undefined ? undefined : this.resultAt.get(id);
  }

  firstEvent(type: string, after: number): number | undefined {
    return this.events.get(type)?.find((t) => t >= after);
  }

  stop(): void {
    for (const s of this.#subs) s.unsubscribe();
  }
}
