import type { JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { AgentCommand, AgentCommandKinds } from '../../schemas/agent/agentCommand.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { Logger } from '../platform/logger.ts';
import { StreamWatch } from './streamWatch.ts';

/** How far back the index reads BC_AGENT_COMMANDS when it starts: results come within moments of their command. */
export const SENT_COMMANDS_LOOKBACK_MS = 24 * 3600_000;
/** Commands remembered at most (oldest forgotten first). */
const SENT_COMMANDS_KEPT = 200_000;
/** How long a lookup waits for a command the index has not read yet (a result can overtake its command's delivery). */
const LOOKUP_WAIT_MS = 2_000;

/** Every command of the stream, site and node commands alike (`bc.site.<s>.cmd.<node>`, `bc.site.<s>.node.<node>.cmd`). */
const ALL_SENT = 'bc.site.>';

const keyOf = (commandId: string, nonce: string) => `${commandId}/${nonce}`;

/**
 * The agent commands the control plane sent (BC_AGENT_COMMANDS), by command id and nonce: what the result intake
 * looks a result's command up in. One ordered consumer per process, fed from the stream (the last day when it starts,
 * then everything stored), so a lookup costs no request. Only what parses as a command and was stored on the subject
 * of its own kind, site and node is indexed.
 */
export class SentCommands {
  readonly #watch: StreamWatch<AgentCommand>;

  constructor(nc: NatsConnection, log: Logger, lookbackMs = SENT_COMMANDS_LOOKBACK_MS) {
    this.#watch = new StreamWatch<AgentCommand>(nc, {
      stream: Streams.agentCommands.name,
      filter: ALL_SENT,
      from: new Date(Date.now() - lookbackMs),
      maxKeys: SENT_COMMANDS_KEPT,
      extract: (msg: JsMsg) => {
        const parsed = AgentCommand.safeParse(msg.json());
        if (!parsed.success) return [];
        const command = parsed.data;
        const sentOn = AgentCommandKinds[command.kind].runsOn === 'site' ? Subjects.siteAgentCommands : Subjects.nodeAgentCommands;
        return msg.subject === sentOn(command.siteId, command.nodeId) ? [[keyOf(command.commandId, command.nonce), command] as const] : [];
      },
      log,
    });
  }

  start(): Promise<void> {
    return this.#watch.start();
  }

  stop(): Promise<void> {
    return this.#watch.stop();
  }

  /**
   * The command with this id and nonce sent to `siteId`/`nodeId`, waiting a moment for one stored but not read yet;
   * undefined when there is none.
   */
  async find(siteId: string, nodeId: string, commandId: string, nonce: string, signal: AbortSignal): Promise<AgentCommand | undefined> {
    const command = await this.#watch.next(keyOf(commandId, nonce), () => true, LOOKUP_WAIT_MS, signal);
    return command && command.siteId === siteId && command.nodeId === nodeId ? command : undefined;
  }
}
