import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { LeaseRecord, type LeasedService } from '../../../schemas/lease.ts';
import { Buckets } from '../../../schemas/subjects.ts';
import type { Logger } from '../logger.ts';
import { WRONG_LAST_SEQUENCE } from '../nats/wrongLastSequence.ts';

/** What a leader holds while it leads: the term it stamps on its commands, and the end of its leadership. */
export interface LeaseTerm {
  readonly service: LeasedService;
  /** The fencing token: the KV revision of the write that took the lease. */
  readonly term: number;
  /** Aborted when the lease is lost: the service must stop acting. */
  readonly signal: AbortSignal;
  /** Gives the lease up at once (a command of this term was refused: another instance leads). */
  lost(reason: string): void;
}

/** A service started under a lease. */
export interface LedService {
  stop(): Promise<void>;
  readonly failure?: Promise<Error>;
}

export interface LeaderLeaseOptions {
  service: LeasedService;
  /** How long a leader may go without renewing before a standby takes over; also how soon a cut-off leader stops. */
  leaseMs: number;
  holder?: string;
}

/** The lease's current value and revision, or undefined when the key is absent (or deleted). */
export async function readLease(kv: KV, service: LeasedService): Promise<{ record: LeaseRecord; revision: number; term: number } | undefined> {
  const entry = await kv.get(service);
  return entry ? leaseOf(entry) : undefined;
}

function leaseOf(entry: KvEntry): { record: LeaseRecord; revision: number; term: number } | undefined {
  if (entry.operation !== 'PUT') return undefined;
  const parsed = LeaseRecord.safeParse(entry.json());
  if (!parsed.success) return undefined;
  return { record: parsed.data, revision: entry.revision, term: parsed.data.term || entry.revision };
}

export const openLeaseBucket = (nc: NatsConnection): Promise<KV> => new Kvm(nc).open(Buckets.leases.name);

/**
 * A leader lease on key `<service>` of the `bc_leases` KV bucket. Taking it and renewing it are compare-and-set
 * writes on the key's revision, so two contenders cannot both win. NATS 2.9 KV has no per-key TTL (only a bucket-wide
 * max age, which would give every service one lease length, run on the server's expiry timer and delete the key
 * under a leader that is merely slow), so expiry is judged the way Kubernetes leader election does it: a standby
 * takes the lease when it has seen the same revision for a whole `leaseMs` on its own monotonic clock; no two hosts'
 * clocks are ever compared. The leader renews every `leaseMs / 3` and stops on its own once `leaseMs` has passed
 * since it sent its last successful renewal, which is always before any standby may take over. A leader that was
 * paused past that (GC, SIGSTOP) may still send before it notices: the term it stamps is then older than the
 * lease's, and the command service refuses the command (`LEASE_SUPERSEDED`).
 */
export class LeaderLease {
  readonly service: LeasedService;
  readonly holder: string;
  readonly leaseMs: number;
  #stopped = false;
  #loop: Promise<void> | undefined;
  #current: { term: LeaseTerm; abort: AbortController; revision: number; validUntil: number; acquiredAt: string } | undefined;
  /** The revision this instance last wrote (for a delete that must not remove another holder's lease). */
  #lastRevision = 0;
  /** Set when this instance gives its term up itself (its service failed): the key is deleted for the next leader. */
  #release = false;

  constructor(
    private readonly nc: NatsConnection,
    options: LeaderLeaseOptions,
    private readonly log: Logger,
  ) {
    this.service = options.service;
    this.leaseMs = options.leaseMs;
    this.holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  }

  /** The term held now, if this instance leads. */
  current(): LeaseTerm | undefined {
    return this.#current?.term;
  }

  /**
   * Campaigns for the lease until `stop()`; each time it is won, `lead(term)` starts the service, which is stopped
   * again when the lease is lost (the instance then stands by again). A led service that fails or does not start
   * gives the lease up and is started afresh once this instance wins again; `onFailure` hears only the end of the
   * campaign itself (the lease bucket cannot be opened).
   */
  run(lead: (term: LeaseTerm) => Promise<LedService>, onFailure: (err: Error) => void): void {
    this.#loop = this.campaign(lead).catch((err: unknown) => onFailure(err instanceof Error ? err : new Error(String(err))));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#current?.abort.abort();
    await this.#loop;
  }

  private async campaign(lead: (term: LeaseTerm) => Promise<LedService>): Promise<void> {
    const kv = await openLeaseBucket(this.nc);
    const pollMs = Math.max(50, Math.floor(this.leaseMs / 4));
    let observed: { revision: number; since: number; leaseMs: number } | undefined;
    while (!this.#stopped) {
      const won = await this.tryAcquire(kv, observed, (o) => (observed = o)).catch((err: unknown) => {
        this.log.debug({ err, service: this.service }, 'lease read failed; trying again');
        return undefined;
      });
      if (won === undefined) {
        await sleep(pollMs);
        continue;
      }
      observed = undefined;
      const { term, abort } = won;
      this.log.info({ service: this.service, holder: this.holder, term: term.term }, 'took the leader lease; starting');
      // Renewals run from the moment the lease is taken, while the service starts (a start that takes longer than
      // a lease must not let the lease lapse under it).
      const kept = this.keep(kv, abort.signal);
      let service: LedService | undefined;
      try {
        service = await lead(term);
        // A led service that stops working on its own (its consumer ended, e.g. on a timeout while the cluster
        // moved a leader) ends the term: it is stopped, the lease given up, and this instance campaigns again with
        // a fresh service, as a supervisor's restart of the process would.
        void service.failure?.then((err) => {
          if (abort.signal.aborted) return;
          this.log.error({ err, service: this.service, term: term.term }, 'the led service failed; giving the lease up');
          this.#release = true;
          abort.abort('the service failed');
        });
      } catch (err) {
        // A start that failed (JetStream briefly unavailable while a cluster elects leaders, say) gives the lease up
        // for another instance, and this one campaigns again after a pause: what a supervisor's restart would do.
        if (!abort.signal.aborted) this.log.error({ err, service: this.service, term: term.term }, 'the led service did not start; giving the lease up');
        abort.abort('the service did not start');
        await kept;
        await kv.delete(this.service, { previousSeq: this.#lastRevision }).catch(() => undefined);
        this.#current = undefined;
        await sleep(Math.max(250, Math.floor(this.leaseMs / 2)));
        continue;
      }
      try {
        await kept;
      } finally {
        abort.abort();
        this.#current = undefined;
        await service.stop().catch((err: unknown) => this.log.error({ err, service: this.service }, 'stopping the led service failed'));
        if (!this.#stopped)
          this.log.warn(
            { service: this.service, holder: this.holder, term: term.term, reason: String(abort.signal.reason ?? '') },
            'stood down: lease lost; standing by',
          );
      }
      if (this.#release) {
        this.#release = false;
        await kv.delete(this.service, { previousSeq: this.#lastRevision }).catch(() => undefined);
        await sleep(Math.max(250, Math.floor(this.leaseMs / 2)));
      }
    }
  }

  /** One look at the key: takes the lease when it is free or has not moved for a whole lease on this clock. */
  private async tryAcquire(
    kv: KV,
    observed: { revision: number; since: number; leaseMs: number } | undefined,
    observe: (o: { revision: number; since: number; leaseMs: number }) => void,
  ) {
    const now = performance.now();
    const entry = await kv.get(this.service);
    const lease = entry ? leaseOf(entry) : undefined;
    const sentAt = performance.now();
    const record = (term: number, acquiredAt: string): LeaseRecord => ({
      service: this.service,
      holder: this.holder,
      term,
      leaseMs: this.leaseMs,
      acquiredAt,
      renewedAt: new Date().toISOString(),
    });
    const acquiredAt = new Date().toISOString();
    let revision: number;
    try {
      if (!entry) revision = await kv.create(this.service, JSON.stringify(record(0, acquiredAt)));
      else if (!lease) revision = await kv.update(this.service, JSON.stringify(record(0, acquiredAt)), entry.revision);
      else if (lease.record.holder === this.holder) {
        // Its own lapsed term (renewals failed while NATS was away; the service is already stopped): no one else
        // took it, so this instance takes a new term at once instead of waiting out its own lease.
        revision = await kv.update(this.service, JSON.stringify(record(0, acquiredAt)), lease.revision);
      } else {
        if (observed?.revision !== lease.revision) {
          observe({ revision: lease.revision, since: now, leaseMs: lease.record.leaseMs });
          return undefined;
        }
        if (now - observed.since < observed.leaseMs) return undefined;
        this.log.info(
          { service: this.service, holder: lease.record.holder, term: lease.term, silentMs: Math.round(now - observed.since) },
          'leader lease not renewed for a whole lease; taking over',
        );
        revision = await kv.update(this.service, JSON.stringify(record(0, acquiredAt)), lease.revision);
      }
    } catch (err) {
      if ((err as { code?: unknown }).code === WRONG_LAST_SEQUENCE || /wrong last sequence|key exists/i.test(String(err))) return undefined;
      throw err;
    }
    const abort = new AbortController();
    const term: LeaseTerm = { service: this.service, term: revision, signal: abort.signal, lost: (reason) => abort.abort(reason) };
    this.#current = { term, abort, revision, validUntil: sentAt + this.leaseMs, acquiredAt };
    this.#lastRevision = revision;
    return { term, abort };
  }

  /** Renews every third of the lease until it is lost (taken over, expired unrenewed, given up) or the lease stops. */
  private async keep(kv: KV, signal: AbortSignal): Promise<void> {
    const current = this.#current!;
    const expiry = () => {
      const left = current.validUntil - performance.now();
      if (left <= 0) current.abort.abort('not renewed within the lease');
      else timer = setTimeout(expiry, left);
    };
    let timer = setTimeout(expiry, this.leaseMs);
    try {
      while (!signal.aborted && !this.#stopped) {
        await sleep(Math.floor(this.leaseMs / 3), undefined, { signal }).catch(() => undefined);
        if (signal.aborted || this.#stopped) return;
        const sentAt = performance.now();
        const record: LeaseRecord = {
          service: this.service,
          holder: this.holder,
          term: current.term.term,
          leaseMs: this.leaseMs,
          acquiredAt: current.acquiredAt,
          renewedAt: new Date().toISOString(),
        };
        try {
          current.revision = await kv.update(this.service, JSON.stringify(record), current.revision);
          this.#lastRevision = current.revision;
          current.validUntil = sentAt + this.leaseMs;
        } catch (err) {
          if ((err as { code?: unknown }).code === WRONG_LAST_SEQUENCE || /wrong last sequence/i.test(String(err))) {
            current.abort.abort('another instance took the lease');
            return;
          }
          this.log.warn({ err, service: this.service }, 'lease renewal failed; retrying while the lease lasts');
        }
      }
    } finally {
      clearTimeout(timer);
      // A stop gives the lease up at once, so a standby need not wait out the lease.
      if (this.#stopped) await kv.delete(this.service, { previousSeq: this.#lastRevision }).catch(() => undefined);
    }
  }
}
