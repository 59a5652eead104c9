import type { NatsConnection } from '@nats-io/transport-node';
import type { CommandResult } from '../../../schemas/api.ts';
import { sendCommand } from './sendCommand.ts';

export interface CommandSendOptions {
  commandId?: string;
  causationId?: string;
  /** The leader lease stamp (`<service>/<term>`) the command is sent under; the `commands` fence checks it. */
  lease?: string;
  /**
   * Who sends it, recorded on its events when it is decided in this process. Over NATS the responder records the
   * credential that signed the request instead (`commandSender.ts`): a sender cannot claim a name.
   */
  actor?: string;
}

/**
 * Where an engine command goes: resolves its result, or throws a `PlatformError` with the decider's code, the same
 * whichever way it travelled.
 */
export interface CommandChannel {
  send(name: string, payload: unknown, options: CommandSendOptions): Promise<CommandResult>;
}

/** NATS request-reply to the `commands` replicas (`sendCommand`). */
export const natsCommandChannel = (nc: NatsConnection): CommandChannel => ({
  send: (name, payload, { actor: _unverifiable, ...options }) => sendCommand(nc, name, payload, options),
});

/**
 * A process's way to its engine commands: over NATS, or straight to the `commands` service of the same process while
 * one runs here (`BC_PROCESS_LAYOUT=compact`). Decided here, a command makes no request, no reply and no second
 * parse, and goes through the same checks the responder makes (what is served, the lease fence).
 */
export class ProcessCommandChannel implements CommandChannel {
  #local: CommandChannel | undefined;

  constructor(private readonly remote: CommandChannel) {}

  /** Sends to `local` from now on; the returned function goes back to NATS (the service stopped). */
  serveLocally(local: CommandChannel): () => void {
    this.#local = local;
    return () => {
      if (this.#local === local) this.#local = undefined;
    };
  }

  send(name: string, payload: unknown, options: CommandSendOptions): Promise<CommandResult> {
    return (this.#local ?? this.remote).send(name, payload, options);
  }
}
