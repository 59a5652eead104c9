import { randomUUID } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { COMMAND_PARTITIONS, partitionOwner, ResponderAnnouncement } from '../../schemas/commandPartitions.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { Logger } from '../platform/logger.ts';

export interface PartitionTiming {
  /** How often a responder says it is alive. */
  beatMs: number;
  /** A responder not heard from for this long is gone: the others take its partitions. */
  expiryMs: number;
}

/** Three beats may be lost before a responder's partitions move; a crash is seen sooner by the senders (no responders). */
export const DEFAULT_PARTITION_TIMING: PartitionTiming = { beatMs: 2_000, expiryMs: 6_500 };

/**
 * One `commands` replica's share of the command partitions (`schemas/commandPartitions.ts`). The replicas announce
 * themselves on `bc.ctl.commands.responders`; each computes the same owner for every partition from the members it
 * has heard, and subscribes to the partitions it owns. While the members disagree (one just started or stopped), a
 * partition may have two owners (they share it as one queue group) or none (the sender then uses the queue group
 * of `bc.cmd.<name>`): either way every command is answered, only less often by the replica holding its aggregate.
 */
export class ResponderPartitions {
  readonly responderId = randomUUID();
  /** Other responders, by id: when each was last heard. */
  readonly #others = new Map<string, number>();
  readonly #owned = new Map<number, Subscription>();
  #announcements: Subscription | undefined;
  #beat: NodeJS.Timeout | undefined;

  constructor(
    private readonly nc: NatsConnection,
    /** Subscribes the command handler to one partition's subject. */
    private readonly serve: (partition: number) => Subscription,
    private readonly log: Logger,
    private readonly timing: PartitionTiming = DEFAULT_PARTITION_TIMING,
  ) {}

  /** The partitions this responder serves now. */
  owned(): number[] {
    return [...this.#owned.keys()].sort((a, b) => a - b);
  }

  /** Every responder this one counts, itself included. */
  members(): string[] {
    return [this.responderId, ...this.#others.keys()].sort();
  }

  start(): void {
    const sub = this.nc.subscribe(Subjects.commandResponders);
    this.#announcements = sub;
    void (async () => {
      for await (const msg of sub) {
        let announcement: ResponderAnnouncement;
        try {
          announcement = ResponderAnnouncement.parse(msg.json());
        } catch (err) {
          this.log.warn({ err, subject: msg.subject }, 'ignoring a malformed responder announcement');
          continue;
        }
        this.#heard(announcement);
      }
      // The connection closed: nothing more can be served or announced on it.
      clearInterval(this.#beat);
    })();
    this.#announce('hello');
    this.#rebalance();
    this.#beat = setInterval(() => {
      this.#announce('alive');
      this.#expire();
    }, this.timing.beatMs);
    this.#beat.unref();
  }

  stop(): void {
    clearInterval(this.#beat);
    this.#announcements?.unsubscribe();
    for (const partition of [...this.#owned.keys()]) this.#release(partition);
    this.#announce('leaving');
  }

  #heard({ responderId, state }: ResponderAnnouncement): void {
    if (responderId === this.responderId) return;
    const wasMember = this.#others.has(responderId);
    const isMember = state !== 'leaving';
    if (isMember) this.#others.set(responderId, Date.now());
    else this.#others.delete(responderId);
    // A newcomer learns the members from their answers rather than after a whole beat.
    if (state === 'hello') this.#announce('alive');
    if (isMember !== wasMember) this.#rebalance();
  }

  #expire(): void {
    const before = Date.now() - this.timing.expiryMs;
    let changed = false;
    for (const [id, heardAt] of this.#others) {
      if (heardAt < before) {
        this.#others.delete(id);
        changed = true;
      }
    }
    if (changed) this.#rebalance();
  }

  #rebalance(): void {
    const members = this.members();
    for (let partition = 0; partition < COMMAND_PARTITIONS; partition++) {
      const mine = partitionOwner(members, partition) === this.responderId;
      const sub = this.#owned.get(partition);
      if (mine && !sub) this.#owned.set(partition, this.serve(partition));
      else if (!mine && sub) this.#release(partition);
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
