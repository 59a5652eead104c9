import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { parseLeaseStamp } from '../../schemas/lease.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { openLeaseBucket, readLease } from '../platform/lease/leaderLease.ts';
import type { Logger } from '../platform/logger.ts';
import { openOnFirstUse } from '../platform/openOnFirstUse.ts';
import { LeaseTermWatch } from './leaseTermWatch.ts';

/**
 * The fence in front of the deciders: a command stamped with a leader lease (`Bc-Lease: <service>/<term>`) runs only
 * while that term is the lease's current one. A stamp equal to the term a watch on the lease bucket delivered fresh
 * (`LeaseTermWatch`: renewed within half a lease) passes without a read: a running leader's commands cost nothing. Any
 * other stamp is checked against the lease read from the bucket's stream leader (the bucket has no direct gets), so a
 * takeover that was acknowledged is seen. A deposed leader that wakes up (a GC pause, SIGSTOP) and sends what it was
 * about to send is refused with LEASE_SUPERSEDED and stands down: it was silent for a whole lease before anyone could
 * take over, so its term is no longer fresh, or no longer the watched one. What it cannot stop: a takeover landing
 * between the check and the append (with the watch: one not yet delivered, while the old term's last renewal is under
 * half a lease old); 2.9 has no multi-subject expectation that would put the term into the append itself.
 */
export class LeaseFence {
  readonly #bucket: () => Promise<KV>;
  readonly #watch: LeaseTermWatch;

  constructor(
    nc: NatsConnection,
    private readonly log: Logger,
  ) {
    this.#bucket = openOnFirstUse(() =>
      openLeaseBucket(nc).catch((err: unknown) => {
        throw new PlatformError('UNAVAILABLE', 'the lease bucket could not be opened', { cause: err });
      }),
    );
    this.#watch = new LeaseTermWatch(this.#bucket, log);
  }

  async check(header: string, commandName: string): Promise<void> {
    const stamp = parseLeaseStamp(header);
    if (!stamp) throw new PlatformError('VALIDATION_FAILED', `Bc-Lease ${JSON.stringify(header.slice(0, 100))} is not <service>/<term>`);
    if (this.#watch.freshTerm(stamp.service) === stamp.term) return;
    const lease = await readLease(await this.#bucket(), stamp.service).catch((err: unknown) => {
      throw new PlatformError('UNAVAILABLE', `the ${stamp.service} lease could not be read`, { cause: err });
    });
    if (lease && stamp.term >= lease.term) return;
    this.log.warn(
      { command: commandName, service: stamp.service, stampedTerm: stamp.term, currentTerm: lease?.term ?? null, holder: lease?.record.holder ?? null },
      'command stamped with a superseded lease refused',
    );
    throw new PlatformError(
      'LEASE_SUPERSEDED',
      lease
        ? `${commandName} is stamped with ${stamp.service} term ${stamp.term}; the lease is at term ${lease.term} (held by ${lease.record.holder})`
        : `${commandName} is stamped with ${stamp.service} term ${stamp.term}; nobody holds that lease now`,
    );
  }
}
