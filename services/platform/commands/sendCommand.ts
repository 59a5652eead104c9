import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import type { CommandResult, Problem } from '../../../schemas/api.ts';
import { isErrorCode } from '../../../schemas/errorCodes.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import { PlatformError } from '../errors.ts';
import { CommandHeaders } from '../../../schemas/commandHeaders.ts';

/** Sends a command over NATS request-reply; resolves its result or throws a PlatformError with the remote code. */
export async function sendCommand(
  nc: NatsConnection,
  name: string,
  payload: unknown,
  options: { commandId?: string; correlationId?: string; causationId?: string; timeoutMs?: number; lease?: string } = {},
): Promise<CommandResult> {
  const h = natsHeaders();
  if (options.commandId) h.set(CommandHeaders.commandId, options.commandId);
  if (options.correlationId) h.set(CommandHeaders.correlationId, options.correlationId);
  if (options.causationId) h.set(CommandHeaders.causationId, options.causationId);
  if (options.lease) h.set(CommandHeaders.lease, options.lease);
  let reply;
  try {
    reply = await nc.request(Subjects.command(name), JSON.stringify(payload), { headers: h, timeout: options.timeoutMs ?? 10_000 });
  } catch (err) {
    // No responder yet (the commands service is starting) or no answer in time: safe to retry with the same id.
    throw new PlatformError('UNAVAILABLE', `no answer to ${name} on ${Subjects.command(name)}`, { cause: err });
  }
  const body = reply.json<{ ok: true; result: CommandResult } | { ok: false; error: Problem }>();
  if (body.ok) return body.result;
  throw new PlatformError(isErrorCode(body.error.code) ? body.error.code : 'INTERNAL', body.error.detail, { issues: body.error.issues });
}
