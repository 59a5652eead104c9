import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { formatLeaseStamp } from '../../schemas/lease.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { busCommands } from '../../services/api/commandCatalog.ts';
import { LeaderLease, openLeaseBucket, readLease, type LeaseTerm } from '../../services/platform/lease/leaderLease.ts';
import { LeaseReader } from '../../services/platform/lease/leaseReader.ts';
import { sendEngineCommand } from '../../services/platform/processManager/engineCommands.ts';
import { natsCommandChannel } from '../../services/platform/commands/commandChannel.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { thrownCode } from '../support/thrownCode.ts';

const LEASE_MS = 600;

/** A contender whose led "service" records when it runs. */
function contender(env: Awaited<ReturnType<typeof startBackbone>>, name: string, events: string[]) {
  const lease = new LeaderLease(env.nc, { service: 'workflow-orchestrator', leaseMs: LEASE_MS, holder: name }, env.log);
  const terms: LeaseTerm[] = [];
  lease.run(
    async (term) => {
      terms.push(term);
      events.push(`${name} leads ${term.term}`);
      return { stop: async () => void events.push(`${name} stops ${term.term}`) };
    },
    (err) => events.push(`${name} failed ${err.message}`),
  );
  return { lease, terms };
}

async function until(what: () => boolean, timeoutMs = 10_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !what();) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(20);
  }
}

describe('leader lease', () => {
  it(
    'one of two contenders leads; a stop hands over at once; the term grows and the old term is refused by the command service',
    { timeout: 60_000 },
    async () => {
      await using env = await startBackbone({ projectors: false });
      const sub = serveCommands(env.nc, new CommandBus(env.store, busCommands, { retries: 3 }), env.log);
      const events: string[] = [];
      const a = contender(env, 'a', events);
      await until(() => a.terms.length === 1);
      const b = contender(env, 'b', events);
      // b stands by while a renews: several lease periods pass without a takeover.
      await sleep(LEASE_MS * 3);
      expect(b.terms).toEqual([]);
      const kv = await openLeaseBucket(env.nc);
      const first = a.terms[0]!.term;
      expect((await readLease(kv, 'workflow-orchestrator'))?.term).toBe(first);
      expect((await new LeaseReader(env.nc).leaders()).map((l) => [l.service, l.holder, l.term, l.stale])).toEqual([
        ['workflow-orchestrator', 'a', first, false],
      ]);

      // A command stamped with the current term runs.
      const ok = await sendCommand(
        env.nc,
        'site.create',
        { siteId: 'dc1', name: 'DC 1' },
        { commandId: 'lease-site-1', lease: formatLeaseStamp('workflow-orchestrator', first) },
      );
      expect(ok.duplicate).toBe(false);

      await a.lease.stop();
      await until(() => b.terms.length === 1, 5_000);
      const second = b.terms[0]!.term;
      expect(second).toBeGreaterThan(first);
      expect(a.terms[0]!.signal.aborted).toBe(true);

      // The old term is refused with a stable code and nothing is appended; the new one runs.
      const before = await env.store.streamLastSequence();
      const refused = await sendCommand(
        env.nc,
        'site.create',
        { siteId: 'dc2', name: 'DC 2' },
        { commandId: 'lease-site-2', lease: formatLeaseStamp('workflow-orchestrator', first) },
      ).catch((err: unknown) => err);
      expect(
        thrownCode(() => {
          throw refused;
        }),
      ).toBe('LEASE_SUPERSEDED');
      expect(await env.store.streamLastSequence()).toBe(before);
      const malformed = await sendCommand(
        env.nc,
        'site.create',
        { siteId: 'dc2', name: 'DC 2' },
        { commandId: 'lease-site-3', lease: 'workflow-orchestrator/x' },
      ).catch((err: unknown) => err);
      expect((malformed as { code?: string }).code).toBe('VALIDATION_FAILED');
      await sendCommand(
        env.nc,
        'site.create',
        { siteId: 'dc2', name: 'DC 2' },
        { commandId: 'lease-site-4', lease: formatLeaseStamp('workflow-orchestrator', second) },
      );

      // A leader's engine command refused for its term gives the lease up.
      const stale: LeaseTerm = { ...a.terms[0]!, signal: new AbortController().signal, lost: (reason) => events.push(`stale lost: ${reason.slice(0, 20)}`) };
      await expect(
        sendEngineCommand(natsCommandChannel(env.nc), env.log, new AbortController().signal, 'site.create', { siteId: 'dc3', name: 'DC 3' }, 'lease-site-5', {
          lease: stale,
        }),
      ).rejects.toMatchObject({ code: 'LEASE_SUPERSEDED' });
      expect(events.some((e) => e.startsWith('stale lost'))).toBe(true);
      await b.lease.stop();
      sub.unsubscribe();
    },
  );

  it(
    'a leader whose key another wrote is deposed at its next renewal; the writer, silent, is replaced only once the key stood still for a whole lease',
    { timeout: 60_000 },
    async () => {
      await using env = await startBackbone({ projectors: false });
      const events: string[] = [];
      const a = contender(env, 'a', events);
      await until(() => a.terms.length === 1);
      const kv = await openLeaseBucket(env.nc);
      // Freeze a's renewals: hold its key with a foreign write at the same term, as a paused leader's silence looks.
      const held = await readLease(kv, 'workflow-orchestrator');
      const b = contender(env, 'b', events);
      const startedWaiting = Date.now();
      await kv.update('workflow-orchestrator', JSON.stringify({ ...held!.record, holder: 'c', term: held!.term }), held!.revision);
      // a's next renewal hits a revision it did not write: it is deposed at once.
      await until(() => a.terms[0]!.signal.aborted, 5_000);
      expect(events).toContain(`a stops ${a.terms[0]!.term}`);
      // c (who wrote and went silent) is replaced only after the key stood still for a whole lease, by a or b.
      await until(() => a.terms.length + b.terms.length === 2, 10_000);
      expect(Date.now() - startedWaiting).toBeGreaterThanOrEqual(LEASE_MS);
      expect((await readLease(kv, 'workflow-orchestrator'))!.term).toBeGreaterThan(held!.term);
      await b.lease.stop();
      await a.lease.stop();
    },
  );
});
