import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandResult } from '../../../schemas/api.ts';
import { formatLeaseStamp } from '../../../schemas/lease.ts';
import type { CommandChannel } from '../commands/commandChannel.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
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
  // Another node holds the machine: only its retirement frees it, and that is an operator's act, not a retry.
  'NODE_IDENTITY_CONFLICT',
  // No node takes the instance (`vps.placeInstance`): that is the placement's answer; the sender says what follows.
  'NO_CAPACITY',
]);

/** A domain refusal that settles an engine command: retrying it with the same id cannot change the answer. */
export const isSettledRefusal = (err: unknown): err is PlatformError => err instanceof PlatformError && settled.has(err.code);

/** Infrastructure trouble: the command may not have been decided at all, so it is sent again (its id makes that safe). */
const transient = new Set(['UNAVAILABLE', 'CONCURRENCY_CONFLICT', 'RATE_LIMITED', 'READ_MODEL_BEHIND']);

/** Any answer of the domain (a refusal, not trouble reaching it): for a command whose refusal is itself an answer. */
const isRefusal = (err: unknown): err is PlatformError => err instanceof PlatformError && !transient.has(err.code);

export interface EngineCommandOptions {
  /** Hears a domain refusal (the command is then settled and the send returns undefined). */
  onRefused?: (refusal: PlatformError) => void;
  /** The leader lease the sender acts under: stamped on the command; a refusal of its term gives the lease up. */
  lease?: LeaseTerm;
  /** Who sends it (recorded when the command is decided in this process). */
  actor?: string;
  /** Which refusals settle it: `moot` (the default) the settled codes above, `refusal` every code but transient ones. */
  settles?: 'moot' | 'refusal';
}

/**
 * Sends an engine command with a deterministic id until it is answered: infrastructure trouble is retried with
 * backoff (the id makes that safe), a domain refusal that settles it (`settles`) is logged, handed to `onRefused`
 * and returned as `undefined`. This is the one retry policy of every process manager's commands.
 * A leader's command refused with LEASE_SUPERSEDED ends its term (`lease.lost`) and throws: another instance leads.
 */
export async function sendEngineCommand(
  channel: CommandChannel,
  log: Logger,
  signal: AbortSignal,
  name: string,
  payload: unknown,
  commandId: string,
  options: EngineCommandOptions = {},
): Promise<CommandResult | undefined> {
  const { lease, onRefused, actor } = options;
  const settles = options.settles === 'refusal' ? isRefusal : isSettledRefusal;
  const stamp = lease ? formatLeaseStamp(lease.service, lease.term) : undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      return await channel.send(name, payload, { commandId, causationId: commandId, ...(stamp ? { lease: stamp } : {}), ...(actor ? { actor } : {}) });
    } catch (err) {
      if (err instanceof PlatformError && err.code === 'LEASE_SUPERSEDED') {
        log.warn({ command: name, commandId, detail: err.message }, 'command refused: this instance no longer holds its lease');
        lease?.lost(err.message);
        throw err;
      }
      if (settles(err)) {
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
