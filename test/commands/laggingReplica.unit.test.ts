import { describe, expect, it } from 'vitest';
import type { EventBatch } from '../../schemas/envelope.ts';
import { enrollNode } from '../../services/metal/node/enroll.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { ConcurrencyError } from '../../services/platform/errors.ts';
import type { EventStore, LastEntry, LogEntry, ReadFrom } from '../../services/platform/eventStore/eventStore.ts';
import { createSite } from '../../services/site/site/create.ts';
import { siteAggregate } from '../../services/site/site/site.ts';
import { enrollPayload, siteEventMetadata } from '../support/commandPayloads.ts';
import '../../services/plugins/registry/registry.ts'; // enrolment reads the plugins' hardware profiles from the registry aggregate

/**
 * The event log of a 3-replica stream in memory. The leader holds every append; a `replica` read is answered as a
 * replica that stored only the first `replicaThrough` messages would (a direct get on a cluster promises no
 * read-your-writes). `scanThrough`, when set, is how far the replica answering the next-by-subject reads got, which
 * may differ from the one answering the last-message read (direct gets are spread over the replicas).
 */
class LaggingReplicaLog {
  readonly readsMayLag: boolean;
  readonly messages: { seq: number; subject: string; batch: EventBatch; expectedSeq: number }[] = [];
  replicaThrough = 0;
  scanThrough: number | undefined;
  readonly reads: Record<ReadFrom, number> = { replica: 0, leader: 0 };

  constructor(replicas = 3) {
    this.readsMayLag = replicas > 1;
  }

  catchUp(): void {
    this.replicaThrough = this.messages.length;
  }

  private view(subject: string, from: ReadFrom, through = this.replicaThrough) {
    this.reads[from]++;
    const stored = from === 'leader' || !this.readsMayLag ? this.messages : this.messages.filter((m) => m.seq <= through);
    return stored.filter((m) => m.subject === subject);
  }

  private entry(m: LaggingReplicaLog['messages'][number]): LogEntry {
    return { seq: m.seq, subject: m.subject, messageId: null, batch: m.batch };
  }

  async lastEntry(subject: string, heldSeq?: number, from: ReadFrom = 'replica'): Promise<LastEntry | undefined> {
    const last = this.view(subject, from).at(-1);
    if (!last) return undefined;
    if (last.seq === heldSeq) return { seq: last.seq, held: true };
    return { seq: last.seq, held: false, entry: this.entry(last), previousSeq: last.expectedSeq };
  }

  async *entriesAfter(subject: string, afterSeq: number, throughSeq = Infinity, from: ReadFrom = 'replica'): AsyncGenerator<LogEntry> {
    for (const m of this.view(subject, from, this.scanThrough ?? this.replicaThrough)) if (m.seq > afterSeq && m.seq <= throughSeq) yield this.entry(m);
  }

  /** As a replica read of the real store ends: the messages the answering replica holds, up to `endSeq`. */
  entriesEndingAt(subject: string, afterSeq: number, endSeq: number, from: ReadFrom = 'replica'): AsyncGenerator<LogEntry> {
    return this.entriesAfter(subject, afterSeq, endSeq, from);
  }

  async readAt(seq: number, from: ReadFrom = 'replica'): Promise<LogEntry | undefined> {
    const m = this.messages.find((x) => x.seq === seq && (from === 'leader' || x.seq <= this.replicaThrough));
    return m && this.entry(m);
  }

  async append(subject: string, batch: EventBatch, options: { expectedSeq: number; msgId: string }) {
    const last = this.messages.filter((m) => m.subject === subject).at(-1)?.seq ?? 0;
    if (last !== options.expectedSeq) throw new ConcurrencyError(subject, options.expectedSeq);
    const seq = this.messages.length + 1;
    this.messages.push({ seq, subject, batch, expectedSeq: options.expectedSeq });
    return { seq, duplicate: false };
  }

  asStore(): EventStore {
    return this as unknown as EventStore;
  }
}

const site = (siteId: string) => ({ siteId, name: siteId.toUpperCase() });

describe('reads answered by a replica behind the stream leader', () => {
  it('a load never answers older than what the process holds: a replica behind it is read past at the leader', async () => {
    const log = new LaggingReplicaLog();
    const writer = new CommandBus(log.asStore(), [createSite, enrollNode], { retries: 0 });
    await writer.execute({ name: 'site.create', payload: site('dc1'), actor: 't' });
    await writer.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 't' });
    // The replica has the site, not the node this very process enrolled.
    log.replicaThrough = 1;
    const node = await writer.repository.load(nodeAggregate, 'n1');
    expect(node.state.exists).toBe(true);
    expect(node.seq).toBe(2);
    expect(log.reads.leader).toBe(1);
  });

  it('a state folded from a replica that missed a message in the middle of a subject is never answered', async () => {
    const log = new LaggingReplicaLog();
    const repository = new AggregateRepository(log.asStore());
    const subject = repository.subjectOf(siteAggregate, 'dc1');
    const batch = (commandId: string, name: string): EventBatch => ({
      events: [{ type: 'SiteCreated', version: 1, data: { siteId: 'dc1', name, provisioningCidrs: [] }, metadata: siteEventMetadata(commandId, 'dc1') }],
    });
    await log.append(subject, batch('c1', 'first'), { expectedSeq: 0, msgId: 'c1' });
    await log.append(subject, batch('c2', 'second'), { expectedSeq: 1, msgId: 'c2' });
    await log.append(subject, batch('c3', 'third'), { expectedSeq: 2, msgId: 'c3' });
    log.catchUp();
    // The last message (3, after 2) comes from an up-to-date replica; the scan for 1..2 from one that stored only 1.
    log.scanThrough = 1;
    const loaded = await repository.load(siteAggregate, 'dc1');
    expect(loaded.seq).toBe(3);
    expect(['c1', 'c2', 'c3'].map((id) => loaded.commands.get(id)?.seq)).toEqual([1, 2, 3]);
    expect(log.reads.leader).toBeGreaterThan(0);
  });

  it('a refusal decided on a replica behind is decided again on the leader’s read (a dependency another process just wrote)', async () => {
    const log = new LaggingReplicaLog();
    const operator = new CommandBus(log.asStore(), [createSite], { retries: 0 });
    const commands = new CommandBus(log.asStore(), [enrollNode], { retries: 0 });
    await operator.execute({ name: 'site.create', payload: site('dc1'), actor: 't' });
    // The replica this process reads has not stored the site yet.
    const result = await commands.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 't' });
    expect(result.events.map((e) => e.type)).toEqual(['NodeEnrolled']);
    expect(log.reads.leader).toBeGreaterThan(0);
  });

  it('a conflict is read again at the leader: a replica that keeps answering the old state does not use up the retries', async () => {
    const log = new LaggingReplicaLog();
    const one = new CommandBus(log.asStore(), [createSite], { retries: 1 });
    const two = new CommandBus(log.asStore(), [createSite], { retries: 1 });
    await one.execute({ name: 'site.create', payload: site('dc1'), actor: 't' });
    const refused = await two.execute({ name: 'site.create', payload: site('dc1'), actor: 't' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('ALREADY_EXISTS');
  });

  it('starts over only when the leader, not a replica, shows a log shorter than what the process holds (a replaced stream)', async () => {
    const log = new LaggingReplicaLog();
    const bus = new CommandBus(log.asStore(), [createSite], { retries: 0 });
    await bus.execute({ name: 'site.create', payload: site('dc1'), actor: 't' });
    log.catchUp();
    log.messages.length = 0;
    log.replicaThrough = 0;
    const loaded = await bus.repository.load(siteAggregate, 'dc1');
    expect(loaded).toMatchObject({ seq: 0, state: { exists: false } });
    expect(log.reads.leader).toBe(1);
  });

  it('loadAccepting reads at the leader only when the replica’s state would be refused', async () => {
    const log = new LaggingReplicaLog();
    await new CommandBus(log.asStore(), [createSite], { retries: 0 }).execute({ name: 'site.create', payload: site('dc1'), actor: 't' });
    const reader = new AggregateRepository(log.asStore());
    expect((await reader.loadAccepting(siteAggregate, 'dc1', (s) => s.exists)).state.exists).toBe(true);
    expect(log.reads.leader).toBe(1);
    log.catchUp();
    expect((await new AggregateRepository(log.asStore()).loadAccepting(siteAggregate, 'dc1', (s) => s.exists)).state.exists).toBe(true);
    expect(log.reads.leader).toBe(1);
  });

  it('with one replica every read is the leader’s: no read is made twice', async () => {
    const log = new LaggingReplicaLog(1);
    const operator = new CommandBus(log.asStore(), [createSite], { retries: 0 });
    const commands = new CommandBus(log.asStore(), [enrollNode], { retries: 0 });
    await operator.execute({ name: 'site.create', payload: site('dc1'), actor: 't' });
    await commands.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 't' });
    expect(
      (await commands.execute({ name: 'metal.enroll', payload: enrollPayload('n2', 'nowhere'), actor: 't' }).catch((e: unknown) => e)) as DomainError,
    ).toMatchObject({
      code: 'PRECONDITION_FAILED',
    });
    expect(log.reads.leader).toBe(0);
  });
});
