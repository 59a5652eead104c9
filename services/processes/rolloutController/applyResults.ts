import type { JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Streams, Subjects } from '../../../schemas/subjects.ts';
import { ResultRejectedError } from '../../../plugins/sdk/stepErrors.ts';
import { verifiedResult } from '../../agents/agentExchange.ts';
import { SentCommands } from '../../agents/sentCommands.ts';
import { StreamWatch } from '../../agents/streamWatch.ts';
import type { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import type { Logger } from '../../platform/logger.ts';

/**
 * A `module.apply` its host answered with a signed result saying it did not apply it (a bundle whose digest does not
 * match, a publisher key it does not trust, a bundle it could not fetch, a command past its `notAfter`): the host's
 * outcome is failed now, not timed out at the wave's deadline.
 */
export interface ApplyRefusal {
  readonly kind: 'apply-refused';
  readonly commandId: string;
  readonly rolloutId: string;
  readonly host: string;
  readonly module: string;
  readonly version: string;
  /** The agent's error code (`errorCode` of its result). */
  readonly reason: string;
}

export interface ApplyResultsDeps {
  readonly repository: AggregateRepository;
  readonly log: Logger;
  onRefused(refusal: ApplyRefusal): void;
  /**
   * From when results (and the commands they answer) are read at start, so a restart hears what it missed: the start of
   * the earliest wave still waiting (`refusalLookbackStart`), not a fixed look-back.
   */
  readonly since: Date;
}

/**
 * The results of `module.apply` commands as the result intake stored them (BC_AGENT_RESULTS), verified once more here
 * exactly as a workflow step verifies its result (`verifiedResult`: the registered key of an agent the command was
 * for, this command, its nonce): what the stream holds is never taken on its word. The command a result answers is
 * looked up by id and nonce in the sent commands (`SentCommands`, as the intake does); results of other kinds are
 * ignored, and a successful apply says nothing here either (the host's heartbeats say whether it runs healthy).
 */
export class ApplyResults {
  readonly #commands: SentCommands;
  readonly #watch: StreamWatch<never>;
  readonly #abort = new AbortController();
  readonly #inFlight = new Set<Promise<void>>();

  constructor(
    nc: NatsConnection,
    private readonly deps: ApplyResultsDeps,
  ) {
    // The commands from the same time: a result answers a command sent before it.
    this.#commands = new SentCommands(nc, deps.log, Math.max(0, Date.now() - deps.since.getTime()));
    this.#watch = new StreamWatch<never>(nc, {
      stream: Streams.agentResults.name,
      filter: Subjects.allAcceptedAgentResults,
      from: deps.since,
      // Each stored result is judged as it is read; the watch keeps nothing for waiters.
      extract: (msg: JsMsg) => {
        this.#judge(msg.subject, msg.data);
        return [];
      },
      log: deps.log,
    });
  }

  /** The commands first: a result read at once finds its command indexed. */
  async start(): Promise<void> {
    await this.#commands.start();
    await this.#watch.start();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#watch.stop();
    await Promise.allSettled([...this.#inFlight]);
    await this.#commands.stop();
  }

  #judge(subject: string, bytes: Uint8Array): void {
    const judging = this.#refusalOf(subject, bytes)
      .then((refusal) => refusal && this.deps.onRefused(refusal))
      .catch((err: unknown) => {
        if (!this.#abort.signal.aborted) this.deps.log.error({ err, subject }, 'module.apply result not judged');
      });
    this.#inFlight.add(judging);
    void judging.finally(() => this.#inFlight.delete(judging));
  }

  async #refusalOf(subject: string, bytes: Uint8Array): Promise<ApplyRefusal | undefined> {
    const [, , siteId, , nodeId, commandId, nonce] = subject.split('.');
    if (!siteId || !nodeId || !commandId || !nonce) return undefined;
    const command = await this.#commands.find(siteId, nodeId, commandId, nonce, this.#abort.signal);
    if (command?.kind !== 'module.apply') return undefined;
    let result;
    try {
      result = await verifiedResult(this.deps, command, bytes);
    } catch (err) {
      if (!(err instanceof ResultRejectedError)) throw err;
      this.deps.log.warn({ subject, reason: err.reason }, 'a module.apply result stored on the results stream does not verify: ignored');
      return undefined;
    }
    if (result.ok) return undefined;
    const { module, version } = command.params as { module: string; version: string };
    const reason = result.errorCode || 'FAILED';
    return { kind: 'apply-refused', commandId, rolloutId: command.workflowId, host: command.nodeId, module, version, reason };
  }
}
