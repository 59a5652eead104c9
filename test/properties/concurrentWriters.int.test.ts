import fc from 'fast-check';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { CommandResult } from '../../schemas/api.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { foldStored } from '../arbitraries/backbone.ts';
import { startBackbone } from '../support/backboneFixture.ts';

const NODE = 'n1';
const SUBJECT = `bc.evt.metal.node.${NODE}`;
/** Three patient processes and one that never retries, so conflicts surface as CONCURRENCY_CONFLICT too. */
const RETRIES = [20, 20, 20, 0];

const commandArb = fc.record({
  // Mostly "on" with a reason of its own, so the command changes state whenever it is decided; "off" may be a no-op.
  on: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
  bus: fc.nat(RETRIES.length - 1),
  // The same command id sent again by other processes (a client retrying through another replica).
  retriedBy: fc.array(fc.nat(RETRIES.length - 1), { maxLength: 2 }),
  delayMs: fc.nat(4),
});

type Attempt = { commandId: string; bus: number } & ({ ok: true; result: CommandResult } | { ok: false; error: unknown });

describe('concurrent writers', () => {
  it('concurrent writers on one node append each decided command exactly once, in sequence', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { minLength: 8, maxLength: 20 }), async (commands) => {
        await using env = await startBackbone({ projectors: false });
        await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'setup' });
        const enroll = await env.bus.execute({
          name: 'metal.enroll',
          payload: {
            nodeId: NODE,
            siteId: 'dc1',
            bmc: { address: 'https://10.0.0.21', credentialsRef: 'secret:b' },
            hardwareProfile: 'default',
            macs: ['52:54:00:00:00:01'],
          },
          actor: 'setup',
        });
        const connections = await Promise.all(RETRIES.map((_, i) => connectNats(env.nats.url, `writer-${i}`)));
        try {
          const buses = await Promise.all(
            connections.map(async (nc, i) => new CommandBus(await openEventStore(nc, env.config), allCommands, { retries: RETRIES[i]! })),
          );
          const attempts: Promise<Attempt>[] = [];
          commands.forEach((c, i) => {
            const commandId = `mnt-${String(i).padStart(4, '0')}`;
            const payload = c.on ? { nodeId: NODE, on: true, reason: `reason ${i}` } : { nodeId: NODE, on: false };
            for (const [k, bus] of [c.bus, ...c.retriedBy].entries()) {
              attempts.push(
                sleep(c.delayMs + k).then(() =>
                  buses[bus]!.execute({ name: 'metal.setMaintenance', payload, commandId, actor: `writer-${bus}` }).then(
                    (result): Attempt => ({ commandId, bus, ok: true, result }),
                    (error: unknown): Attempt => ({ commandId, bus, ok: false, error }),
                  ),
                ),
              );
            }
          });
          const settled = await Promise.all(attempts);

          for (const a of settled) if (!a.ok) expect(a.error, `${a.commandId} on bus ${a.bus}`).toMatchObject({ code: 'CONCURRENCY_CONFLICT' });
          for (const a of settled) if (!a.ok) expect(a.error).toBeInstanceOf(PlatformError);

          const log = [];
          for await (const stored of env.store.readAfter(SUBJECT, 0)) log.push(stored);
          expect(log[0]!.seq).toBe(enroll.seq);
          const seqs = log.map((m) => m.seq);
          expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!)).toBe(true);
          const logIds = log.map((m) => m.batch.events[0]!.metadata.commandId);
          expect(new Set(logIds).size).toBe(logIds.length);
          for (const m of log) expect(new Set(m.batch.events.map((e) => e.metadata.commandId)).size).toBe(1);

          const withEvents = settled.filter((a): a is Attempt & { ok: true } => a.ok && a.result.events.length > 0);
          for (const a of withEvents) {
            const entries = log.filter((m) => m.batch.events[0]!.metadata.commandId === a.commandId);
            expect(entries, `${a.commandId} (duplicate: ${a.result.duplicate})`).toHaveLength(1);
            expect(a.result.seq).toBe(entries[0]!.seq);
            expect(a.result.events).toEqual(entries[0]!.batch.events.map(({ type, version, data }) => ({ type, version, data })));
          }
          // Exactly the commands some attempt answered with events are in the log: refused, conflicted and no-op ones are not.
          const answered = new Set(withEvents.map((a) => a.commandId));
          expect(new Set(logIds.slice(1))).toEqual(answered);
          const conflicted = new Set(settled.filter((a) => !a.ok).map((a) => a.commandId));
          for (const id of conflicted) if (!answered.has(id)) expect(logIds).not.toContain(id);

          const folded = foldStored(
            nodeAggregate,
            log.flatMap((m) => m.batch.events),
          );
          const fresh = new CommandBus(env.store, allCommands, { retries: 0 });
          expect((await fresh.repository.load(nodeAggregate, NODE)).state).toEqual(folded);
          for (const bus of buses) {
            const snapshot = await bus.repository.load(nodeAggregate, NODE);
            expect(snapshot.state).toEqual(folded);
            expect(snapshot.seq).toBe(seqs.at(-1));
          }
        } finally {
          for (const nc of connections) await nc.close();
        }
      }),
      { numRuns: 6 },
    );
  });
});
