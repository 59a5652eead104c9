import { setTimeout as sleep } from 'node:timers/promises';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import type { CommandResult, Problem } from '../../../schemas/api.ts';
import { CommandHeaders } from '../../../schemas/commandHeaders.ts';
import { isErrorCode } from '../../../schemas/errorCodes.ts';
import { formatLeaseStamp } from '../../../schemas/lease.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import { PlatformError } from '../errors.ts';
import type { LeaseTerm } from '../lease/leaderLease.ts';
import type { Logger } from '../logger.ts';

/** Codes that mean "the command is moot" (already done, or overtaken): retrying cannot change the answer. */
const settled = new Set([
  'ILLEGAL_TRANSITION',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PRECONDITION_FAILED',
  'PLAN_DIGEST_MISMATCH',
  'VALIDATION_FAILED',
  'UNKNOWN_COMMAND',
  'IDEMPOTENCY_KEY_REUSED',
]);

export interface EngineCommandOptions {
  /** Hears a domain refusal (the command is then settled and the send returns undefined). */
  onRefused?: (refusal: PlatformError) => void;
  /** The leader lease the sender acts under: stamped on the command; a refusal of its term gives the lease up. */
  lease?: LeaseTerm;
}

/**
 * One engine command as a NATS request on `bc.cmd.<name>` (the `commands` service answers it): its result, or a
 * PlatformError with the remote code. No answer (no responder yet, or none in time) is `UNAVAILABLE`: safe to retry
 * with the same id.
 */
async function requestCommand(nc: NatsConnection, name: string, payload: unknown, commandId: string, lease: string | undefined): Promise<CommandResult> {
  const h = natsHeaders();
  h.set(CommandHeaders.commandId, commandId);
  h.set(CommandHeaders.causationId, commandId);
  if (lease) h.set(CommandHeaders.lease, lease);
  let reply;
  try {
    reply = await nc.request(Subjects.command(name), JSON.stringify(payload), { headers: h, timeout: 10_000 });
  } catch (err) {
    throw new PlatformError('UNAVAILABLE', `no answer to ${name} on ${Subjects.command(name)}`, { cause: err });
  }
  const body = reply.json<{ ok: true; result: CommandResult } | { ok: false; error: Problem }>();
  if (body.ok) return body.result;
  throw new PlatformError(isErrorCode(body.error.code) ? body.error.code : 'INTERNAL', body.error.detail, { issues: body.error.issues });
}

/**
 * Sends an engine command with a deterministic id until it is answered: infrastructure trouble is retried with
 * backoff (the id makes that safe), a domain refusal is logged, handed to `onRefused` and returned as `undefined`.
 * A leader's command refused with LEASE_SUPERSEDED ends its term (`lease.lost`) and throws: another instance leads.
 */
export async function sendEngineCommand(
  nc: NatsConnection,
  log: Logger,
  signal: AbortSignal,
  name: string,
  payload: unknown,
  commandId: string,
  options: EngineCommandOptions = {},
): Promise<CommandResult | undefined> {
  const { lease, onRefused } = options;
  const stamp = lease ? formatLeaseStamp(lease.service, lease.term) : undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      return await requestCommand(nc, name, payload, commandId, stamp);
    } catch (err) {
      if (err instanceof PlatformError && err.code === 'LEASE_SUPERSEDED') {
        log.warn({ command: name, commandId, detail: err.message }, 'command refused: this instance no longer holds its lease');
        lease?.lost(err.message);
        throw err;
      }
      if (err instanceof PlatformError && settled.has(err.code)) {
        log.info({ command: name, commandId, code: err.code, detail: err.message }, 'engine command refused; treating as settled');
        onRefused?.(err);
        return undefined;
      }
      signal.throwIfAborted();
      lease?.signal.throwIfAborted();
      log.warn({ err, command: name, commandId, attempt }, 'engine command failed; retrying');
      await sleep(Math.min(100 * 2 ** attempt, 5_000), undefined, { signal });
    }
  }
}
