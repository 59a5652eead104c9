import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { COMMAND_PARTITIONS, partitionsByOwner, type ResponderAnnouncement } from '../../schemas/commandPartitions.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { Logger } from '../platform/logger.ts';
import { listenToResponders, RESPONDER_EXPIRY_MS, ResponderRoster } from './responderRoster.ts';

export interface PartitionTiming {
  /** How often a responder says it is alive. */
  beatMs: number;
  /** A responder not heard from for this long is gone: the others take its partitions. */
  expiryMs: number;
}

/** A crash is seen sooner by the senders (no responders) than by the other replicas (three lost beats). */
export const DEFAULT_PARTITION_TIMING: PartitionTiming = { beatMs: 2_000, expiryMs: RESPONDER_EXPIRY_MS };

/**
 * One `commands` replica's share of the command partitions (`schemas/commandPartitions.ts`). The replicas announce
 * themselves on `bc.ctl.commands.responders`; each computes the same owner for every partition from the members it
 * has heard, and subscribes to the partitions it owns. While the members disagree (one just started or stopped), a
 * partition may have two owners (they share it as one queue group) or none (the sender then uses the queue group
 * of `bc.cmd.<name>`): either way every command is answered, only less often by the replica holding its aggregate.
 */
export class ResponderPartitions {
  /** Named like a lease holder, so `nats sub bc.ctl.commands.responders` says which process is which. */
  readonly responderId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /** The other responders. */
  readonly #others: ResponderRoster;
  readonly #owned = new Map<number, Subscription>();
  #announcements: Subscription | undefined;
  #beat: NodeJS.Timeout | undefined;

  constructor(
    private readonly nc: NatsConnection,
    /** Subscribes the command handler to one partition's subject. */
    private readonly serve: (partition: number) => Subscription,
    private readonly log: Logger,
    private readonly timing: PartitionTiming = DEFAULT_PARTITION_TIMING,
  ) {
    this.#others = new ResponderRoster(timing.expiryMs);
  }

  /** The partitions this responder serves now. */
  owned(): number[] {
    return [...this.#owned.keys()].sort((a, b) => a - b);
  }

  /** Every responder this one counts, itself included. */
  members(): string[] {
    return [this.responderId, ...this.#others.members()].sort();
  }

  start(): void {
    const sub = listenToResponders(this.nc, this.log, (announcement) => this.#heard(announcement));
    this.#announcements = sub;
    // The connection closed: nothing more can be served or announced on it.
    void sub.closed.then(() => clearInterval(this.#beat));
    this.#announce('hello');
    this.#rebalance();
    this.#beat = setInterval(() => {
      this.#announce('alive');
      if (this.#others.expire()) this.#rebalance();
    }, this.timing.beatMs);
    this.#beat.unref();
  }

  stop(): void {
    clearInterval(this.#beat);
    this.#announcements?.unsubscribe();
    for (const partition of [...this.#owned.keys()]) this.#release(partition);
    this.#announce('leaving');
  }

  #heard(announcement: ResponderAnnouncement): void {
    if (announcement.responderId === this.responderId) return;
    // A newcomer learns the members from their answers rather than after a whole beat.
    if (announcement.state === 'hello') this.#announce('alive');
    if (this.#others.hear(announcement)) this.#rebalance();
  }

  #rebalance(): void {
    const members = this.members();
    const mine = new Set(partitionsByOwner(members).get(this.responderId));
    for (let partition = 0; partition < COMMAND_PARTITIONS; partition++) {
      const sub = this.#owned.get(partition);
      if (mine.has(partition) && !sub) this.#owned.set(partition, this.serve(partition));
      else if (!mine.has(partition) && sub) this.#release(partition);
    }
    this.log.debug({ responderId: this.responderId, members: members.length, owned: this.#owned.size }, 'command partitions shared out');
  }

  /**
   * Drained, not dropped: a request the server routed here before it saw the unsubscribe is still answered (a plain
   * unsubscribe discards it on arrival, and its sender waits out its timeout). Requests after it go to the new owner.
   */
  #release(partition: number): void {
    const sub = this.#owned.get(partition)!;
    this.#owned.delete(partition);
    if (this.nc.isClosed()) return;
    sub.drain().catch((err: unknown) => this.log.warn({ err, partition }, 'could not drain a command partition'));
  }

  #announce(state: ResponderAnnouncement['state']): void {
    if (this.nc.isClosed() || this.nc.isDraining()) return;
    const announcement: ResponderAnnouncement = { responderId: this.responderId, state };
    this.nc.publish(Subjects.commandResponders, JSON.stringify(announcement));
  }
}
