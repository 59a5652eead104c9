import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { LeasedService, type ServiceLeader } from '../../../schemas/lease.ts';
import { openOnFirstUse } from '../openOnFirstUse.ts';
import { openLeaseBucket, readLease } from './leaderLease.ts';

/** Who holds each leader lease now, read from the lease bucket (services nobody leads are left out). */
export class LeaseReader {
  readonly #kv: () => Promise<KV>;

  constructor(nc: NatsConnection) {
    this.#kv = openOnFirstUse(() => openLeaseBucket(nc));
  }

  async leaders(now = Date.now()): Promise<ServiceLeader[]> {
    const kv = await this.#kv();
    const leaders: ServiceLeader[] = [];
    for (const service of LeasedService.options) {
      const lease = await readLease(kv, service);
      if (!lease) continue;
      const { holder, leaseMs, acquiredAt, renewedAt } = lease.record;
      leaders.push({ service, holder, term: lease.term, leaseMs, acquiredAt, renewedAt, stale: now - Date.parse(renewedAt) > leaseMs });
    }
    return leaders;
  }
}
