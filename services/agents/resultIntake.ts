import { type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type PubAck } from '@nats-io/jetstream';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { decodeSignedResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { Logger } from '../platform/logger.ts';
import { AGENT_RESULT_MAX_MSG_BYTES } from '../platform/nats/streams.ts';
import { ResultRejectedError } from '../../plugins/sdk/stepErrors.ts';
import type { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import type { CommandBus } from '../platform/commands/commandBus.ts';
import type { RefusalTallyOptions } from '../platform/refusalTally.ts';
import { startRefusalCounting, type RefusalCounting } from '../trust/refusals/refusalCounting.ts';
import { isWrongLastSequence } from '../platform/nats/wrongLastSequence.ts';
import { SentCommands } from './sentCommands.ts';
import { acceptedSubjectOf, storedAfter, verifiedResult } from './agentExchange.ts';

/** The queue group of the intake's replicas: each result is taken in once. */
export const RESULT_INTAKE_QUEUE = 'result-intake';

export interface ResultIntakeDeps {
  /**
   * Resolves when `bytes` verify as `command`'s answer from an agent it was for (a registered key, this command, its
   * nonce, an authorised role and the addressee), with the signer's agent id; throws `ResultRejectedError` otherwise.
   * The executor's own check (`verifiedResult`): one rule decides what is stored and what counts.
   */
  verify(command: AgentCommand, bytes: Uint8Array): Promise<{ agentId: string }>;
  /** Refused results: the first of each source in a window logged, the rest counted into `RefusalsCounted`. */
  refusals: RefusalCounting;
  log: Logger;
  /** How far back the command index starts (`SENT_COMMANDS_LOOKBACK_MS` by default). */
  commandLookbackMs?: number;
}

export interface ResultIntake {
  stop(): Promise<void>;
}

/**
 * Stands between agents and BC_AGENT_RESULTS. Agents publish signed results on `bc.site.<s>.res.<node>.<cmd>.<nonce>`
 * as a JetStream publish (a request expecting a PubAck); no stream captures that subject, and this queue group
 * answers it. A result is stored on `bc.site.<s>.accepted.<node>.<cmd>.<nonce>`, which only control-plane credentials
 * may publish, when: it fits the size limit; the command with that id and nonce was sent to that site and node
 * (`SentCommands`); it verifies as that command's answer from an agent the command was for (`deps.verify`); and its
 * signer has no other result stored for the command (message id `<commandId>.<agentId>`: a repeat of the same bytes is
 * answered as the duplicate it is). The answer is the stream's PubAck, or an error whose description starts with the
 * code (`RESULT_*`), so an honest agent sees why. Refusals never store anything and never append an event each.
 */
export async function startResultIntake(nc: NatsConnection, deps: ResultIntakeDeps): Promise<ResultIntake> {
  const commands = new SentCommands(nc, deps.log, deps.commandLookbackMs);
  await commands.start();
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const abort = new AbortController();
  const inFlight = new Set<Promise<void>>();

  const take = async (msg: Msg): Promise<PubAck> => {
    if (msg.data.length > AGENT_RESULT_MAX_MSG_BYTES)
      throw new PlatformError('RESULT_TOO_LARGE', `a result may be ${AGENT_RESULT_MAX_MSG_BYTES} bytes at most`);
    const [, , siteId, , nodeId, commandId, nonce, ...rest] = msg.subject.split('.');
    if (!siteId || !nodeId || !commandId || !nonce || rest.length > 0)
      throw new PlatformError('RESULT_SUBJECT_INVALID', `no command is named by ${msg.subject}`);
    const command = await commands.find(siteId, nodeId, commandId, nonce, abort.signal);
    if (!command) throw new PlatformError('RESULT_COMMAND_UNKNOWN', `no command ${commandId} with this nonce was sent to ${siteId}/${nodeId}`);
    let agentId: string;
    try {
      ({ agentId } = await deps.verify(command, msg.data));
    } catch (err) {
      if (err instanceof ResultRejectedError) throw new PlatformError('RESULT_REFUSED', `result for ${commandId} refused: ${err.reason}`);
      throw err;
    }
    const subject = acceptedSubjectOf(command);
    const msgID = `${commandId}.${agentId}`;
    // The usual case, the command's first result: stored only if the subject still holds nothing, which the server
    // checks as it stores (no read first). Anything already there, or a message id seen in the duplicate window, is
    // sorted out below by what is stored.
    const first = await js.publish(subject, msg.data, { msgID, expect: { lastSubjectSequence: 0 } }).catch((err: unknown) => {
      // The result subject holds a message already.
      if (isWrongLastSequence(err)) return undefined;
      throw err;
    });
    if (first && !first.duplicate) return first;
    // Each signer stores one result per command; the same bytes again (an agent re-publishing) get the first's ack.
    for (let stored = await storedAfter({ jsm }, subject, 0); stored; stored = await storedAfter({ jsm }, subject, stored.seq)) {
      if (signerOf(stored.data) !== agentId) continue;
      if (Buffer.from(stored.data).equals(msg.data)) return { stream: Streams.agentResults.name, seq: stored.seq, duplicate: true, domain: '' };
      throw new PlatformError('RESULT_ALREADY_STORED', `${agentId} already answered ${commandId}`);
    }
    return await js.publish(subject, msg.data, { msgID });
  };

  const answer = async (msg: Msg): Promise<void> => {
    const source = sourceOf(msg.subject);
    const ticket = deps.refusals.admit(source);
    try {
      const ack = await take(msg);
      ticket.passed();
      msg.respond(JSON.stringify(ack));
    } catch (caught) {
      const err = deps.refusals.failed(ticket, caught);
      const refused = err instanceof PlatformError && err.status < 500;
      if (!refused) deps.log.error({ err, subject: msg.subject }, 'result intake failed');
      else if (deps.refusals.logs(err)) deps.log.warn({ source, code: err.code, reason: err.message, subject: msg.subject }, 'agent result refused');
      const code = err instanceof PlatformError ? err.code : 'UNAVAILABLE';
      const status = err instanceof PlatformError ? err.status : 503;
      msg.respond(
        JSON.stringify({ error: { code: status, err_code: 0, description: `${code}: ${err instanceof Error ? err.message : 'result not stored'}` } }),
      );
    }
  };

  const sub: Subscription = nc.subscribe(Subjects.allAgentResults, {
    queue: RESULT_INTAKE_QUEUE,
    callback: (_err, msg) => {
      const handling = answer(msg).catch((err: unknown) => deps.log.error({ err }, 'result intake could not answer'));
      inFlight.add(handling);
      void handling.finally(() => inFlight.delete(handling));
    },
  });
  return {
    stop: async () => {
      sub.unsubscribe();
      abort.abort();
      await Promise.allSettled([...inFlight]);
      await commands.stop();
      await deps.refusals.stop();
    },
  };
}

/**
 * The intake as the control plane runs it (in every `workflow-executor`): results verified against the log's
 * registered keys exactly as the executor verifies them, refusals counted on `bc.evt.trust.refusals.results` through
 * `bus` (which must carry `trust.countRefusals`).
 */
export function startControlPlaneResultIntake(
  nc: NatsConnection,
  options: { repository: AggregateRepository; bus: CommandBus; log: Logger; refusals?: RefusalTallyOptions },
) {
  const log = options.log.child({ service: 'result-intake' });
  return startResultIntake(nc, {
    verify: (command, bytes) => verifiedResult({ repository: options.repository }, command, bytes),
    refusals: startRefusalCounting(options.bus, 'results', log, options.refusals),
    log,
  });
}

/** Who a refusal is counted against: the site and node of the subject, which the broker checks against the credential. */
const sourceOf = (subject: string): string => {
  const [, , siteId, , nodeId] = subject.split('.');
  return `${siteId ?? '?'}/${nodeId ?? '?'}`;
};

function signerOf(bytes: Uint8Array): string | undefined {
  try {
    return decodeSignedResult(bytes).result.agentId;
  } catch {
    return undefined;
  }
}
