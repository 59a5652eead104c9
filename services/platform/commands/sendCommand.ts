import { randomUUID } from 'node:crypto';
import { headers as natsHeaders, RequestError, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import type { CommandResult, Problem } from '../../../schemas/api.ts';
import { commandPartitionOf } from '../../../schemas/commandPartitions.ts';
import { isErrorCode } from '../../../schemas/errorCodes.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import { CommandHeaders } from '../../../schemas/commandHeaders.ts';
import { identityOf } from '../nats/connectionIdentity.ts';
import { commandRouteKey } from './commandDefinition.ts';
import { signCommand } from './commandSender.ts';

/**
 * Sends a command over NATS request-reply; resolves its result or throws a PlatformError with the remote code. On a
 * connection that authenticated with a broker credential the request is signed as that credential's user
 * (`commandSender.ts`), which the `commands` service records as the actor. A
 * command this process has defined goes to the `commands` replica owning its aggregate's partition, or, when no
 * replica owns it right now (no responders: nobody received it), to the queue group every replica serves.
 */
export async function sendCommand(
  nc: NatsConnection,
  name: string,
  payload: unknown,
  options: { commandId?: string; correlationId?: string; causationId?: string; timeoutMs?: number; lease?: string } = {},
): Promise<CommandResult> {
  const identity = identityOf(nc);
  // A signed command names its id (the signature covers it), so a captured request replays only as the duplicate it is.
  const commandId = options.commandId ?? (identity ? `cmd-${randomUUID()}` : undefined);
  const h = natsHeaders();
  if (commandId) h.set(CommandHeaders.commandId, commandId);
  if (options.correlationId) h.set(CommandHeaders.correlationId, options.correlationId);
  if (options.causationId) h.set(CommandHeaders.causationId, options.causationId);
  if (options.lease) h.set(CommandHeaders.lease, options.lease);
  const body = new TextEncoder().encode(JSON.stringify(payload));
  if (identity && commandId) {
    signCommand(identity, { name, commandId, correlationId: options.correlationId, causationId: options.causationId, lease: options.lease }, body, h);
  }
  const timeout = options.timeoutMs ?? 10_000;
  const routeKey = commandRouteKey(name, payload, commandId ?? '');
  let reply: Msg;
  try {
    reply = routeKey === undefined ? await request(nc, Subjects.command(name), body, h, timeout) : await routed(nc, name, routeKey, body, h, timeout);
  } catch (err) {
    // No responder yet (the commands service is starting) or no answer in time: safe to retry with the same id.
    throw new PlatformError('UNAVAILABLE', `no answer to ${name} on ${Subjects.command(name)}`, { cause: err });
  }
  const answer = reply.json<{ ok: true; result: CommandResult } | { ok: false; error: Problem }>();
  if (answer.ok) return answer.result;
  throw new PlatformError(isErrorCode(answer.error.code) ? answer.error.code : 'INTERNAL', answer.error.detail, { issues: answer.error.issues });
}

const request = (nc: NatsConnection, subject: string, body: Uint8Array, headers: MsgHdrs, timeout: number) => nc.request(subject, body, { headers, timeout });

async function routed(nc: NatsConnection, name: string, routeKey: string, body: Uint8Array, headers: MsgHdrs, timeout: number): Promise<Msg> {
  try {
    return await request(nc, Subjects.partitionedCommand(commandPartitionOf(routeKey), name), body, headers, timeout);
  } catch (err) {
    if (!(err instanceof RequestError && err.isNoResponders())) throw err;
    return request(nc, Subjects.command(name), body, headers, timeout);
  }
}
