import fc from 'fast-check';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allProjections } from '../../projections/catalog.ts';
import { openWriter } from '../../projections/runtime/readModelDatabase.ts';
import { Projector } from '../../services/projectors/projector.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { replayInto } from '../../services/projectors/replay.ts';
import { planWorkload, workloadArb } from '../arbitraries/workload.ts';
import { DeadLetterQueue } from '../../services/platform/deadLetters/deadLetterQueue.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { tempDir } from '../support/natsServer.ts';
import { dumpProjectors, runCommand, waitForCheckpoint } from './harness.ts';
import { dumpTables, type TableDump } from './tables.ts';

type Env = Awaited<ReturnType<typeof startBackbone>>;

/** The projectors of one data dir, each stopped and replaced by a new instance (as after a restart) on demand. */
function projectorFleet(env: Env) {
  const live = new Map<string, Projector>();
  const create = (name: string) => {
    const projection = allProjections.find((p) => p.name === name)!;
    return new Projector(env.store, projection, new ReadModelFiles(env.dataDir, name), env.log);
  };
  return {
    live,
    async startAll() {
      for (const { name } of allProjections) {
        const p = create(name);
        live.set(name, p);
        await p.start();
      }
    },
    /** Stops a projector once it caught up with the log (a clean shutdown at that point of the log). */
    async stopCaughtUp(name: string) {
      await waitForCheckpoint(live.get(name)!, await env.store.streamLastSequence(), 10_000, env.store);
      await live.get(name)!.stop();
    },
    /** A new instance on the same data dir, as a restarted process would create. */
    async startNew(name: string) {
      const p = create(name);
      live.set(name, p);
      await p.start();
    },
    async stopAll() {
      for (const p of live.values()) await p.stop();
    },
  };
}

/** A from-scratch rebuild of every read model into files of its own. */
async function rebuildFromScratch(env: Env): Promise<Record<string, TableDump>> {
  using dir = tempDir('bc-scratch-');
  const out: Record<string, TableDump> = {};
  for (const projection of allProjections) {
    const db = openWriter(join(dir.path, `${projection.name}.db`), projection);
    await replayInto(env.store, db, projection, new DeadLetterQueue(env.nc, 'scratch', env.log));
    out[projection.name] = dumpTables(db);
    db.close();
  }
  return out;
}

const killArb = fc.record({ beforeCommand: fc.nat(), projection: fc.constantFrom(...allProjections.map((p) => p.name)), downFor: fc.nat(4) });

describe('projector restarts', () => {
  it('projector restarted at random points of the log ends with the tables of a from-scratch rebuild, and ignores duplicate publishes', async () => {
    await fc.assert(
      fc.asyncProperty(
        workloadArb({ minLength: 8, maxLength: 40 }),
        fc.array(killArb, { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        async (intents, kills, duplicatePicks) => {
          const { commands } = await planWorkload(intents);
          await using env = await startBackbone({ projectors: false });
          const fleet = projectorFleet(env);
          await fleet.startAll();
          try {
            const down = new Map<string, number>();
            for (const [i, command] of commands.entries()) {
              for (const kill of kills.filter((k) => k.beforeCommand % commands.length === i)) {
                if (down.has(kill.projection)) continue; // already down: a second kill at the same point is a no-op
                await fleet.stopCaughtUp(kill.projection);
                down.set(kill.projection, kill.downFor);
              }
              await runCommand(env.bus, command);
              // The log moves on while a projector is down; it resumes from its checkpoint when restarted.
              for (const [name, left] of down) {
                if (left > 0) down.set(name, left - 1);
                else if (down.delete(name)) await fleet.startNew(name);
              }
            }
            for (const name of down.keys()) await fleet.startNew(name);
            const last = await env.store.streamLastSequence();
            for (const p of fleet.live.values()) await waitForCheckpoint(p, last, 10_000, env.store);
            const live = dumpProjectors(fleet.live.values());
            expect(live).toEqual(await rebuildFromScratch(env));

            if (last === 0) return;
            for (const pick of duplicatePicks) {
              const seq = 1 + (pick % last);
              const stored = (await env.store.readAt(seq))!;
              const batch = stored.batch!;
              const msgId = batch.events[0]!.metadata.commandId;
              // Expecting the subject's current last sequence: only deduplication can keep this from appending.
              const expectedSeq = await env.store.lastSequence(stored.subject);
              expect(await env.store.append(stored.subject, batch, { expectedSeq, msgId })).toEqual({ seq, duplicate: true });
            }
            expect(await env.store.streamLastSequence()).toBe(last);
            await sleep(50);
            for (const p of fleet.live.values()) expect(await p.status()).toMatchObject({ checkpoint: last, lag: 0 });
            expect(dumpProjectors(fleet.live.values())).toEqual(live);
          } finally {
            await fleet.stopAll();
          }
        },
      ),
      { numRuns: 8 },
    );
  });
});
