import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allProjections } from '../../projections/catalog.ts';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { defineProjection, type Projection } from '../../projections/runtime/projection.ts';
import { PROJECTORS_DURABLE, ProjectorGroup } from '../../services/projectors/projectorGroup.ts';
import { openWriter } from '../../projections/runtime/readModelDatabase.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { replayInto } from '../../services/projectors/replay.ts';
import { sitesProjection } from '../../projections/sites/projector.ts';
import { listSites } from '../../projections/sites/queries.ts';
import { Streams } from '../../schemas/subjects.ts';
import { DeadLetterQueue } from '../../services/platform/deadLetters/deadLetterQueue.ts';
import { planWorkload, workloadArb } from '../arbitraries/workload.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { tempDir } from '../support/natsServer.ts';
import { dumpProjectors, runCommand, waitForCheckpoint } from './harness.ts';
import { dumpTables, type TableDump } from './tables.ts';

type Env = Awaited<ReturnType<typeof startBackbone>>;

const groupOf = (env: Env, projections: readonly Projection[] = allProjections) =>
  new ProjectorGroup(
    env.store,
    projections.map((projection) => ({ projection, files: new ReadModelFiles(env.dataDir, projection.name) })),
    env.log,
  );

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

/** What may happen to the `projectors` process before a command: a restart, a crash that left one read model ahead of the others, or a rebuild of one read model. */
const disruptionArb = fc.record({
  beforeCommand: fc.nat(),
  kind: fc.constantFrom('restart', 'one read model ahead', 'rebuild one'),
  projection: fc.constantFrom(...allProjections.map((p) => p.name)),
});

describe('projectors group', () => {
  it('projectors restarted, crashed between two read models’ transactions or rebuilding one read model end with the tables of a from-scratch rebuild', async () => {
    await fc.assert(
      fc.asyncProperty(workloadArb({ minLength: 8, maxLength: 30 }), fc.array(disruptionArb, { minLength: 1, maxLength: 4 }), async (intents, disruptions) => {
        const { commands } = await planWorkload(intents);
        await using env = await startBackbone({ projectors: false });
        let group = groupOf(env);
        await group.start();
        const rebuilds: Promise<void>[] = [];
        try {
          for (const [i, command] of commands.entries()) {
            for (const d of disruptions.filter((x) => x.beforeCommand % commands.length === i)) {
              if (d.kind === 'rebuild one') {
                // Concurrent with the commands that follow; a second rebuild of the same read model is refused.
                rebuilds.push(
                  group
                    .member(d.projection)
                    .rebuild()
                    .catch((err: Error) => expect(err.message).toMatch(/already rebuilding/)),
                );
                continue;
              }
              await Promise.all(rebuilds.splice(0));
              await group.stop();
              if (d.kind === 'one read model ahead') {
                // As a crash after this read model's transaction and before the others': it holds more of the log.
                await runCommand(env.bus, command);
                const projection = allProjections.find((p) => p.name === d.projection)!;
                const db = openWriter(new ReadModelFiles(env.dataDir, d.projection).current(), projection);
                await replayInto(env.store, db, projection, new DeadLetterQueue(env.nc, PROJECTORS_DURABLE, env.log));
                db.close();
              }
              group = groupOf(env);
              await group.start();
            }
            await runCommand(env.bus, command);
          }
          await Promise.all(rebuilds);
          const last = await env.store.streamLastSequence();
          for (const m of group.members) await waitForCheckpoint(m, last, 15_000, env.store);
          expect(dumpProjectors(group.members)).toEqual(await rebuildFromScratch(env));
        } finally {
          await Promise.all(rebuilds);
          await group.stop();
        }
      }),
      { numRuns: 6 },
    );
  });

  it('projectors consume through one durable, whatever the number of read models', async () => {
    await using env = await startBackbone();
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    const names: string[] = [];
    for await (const c of env.store.jsm.consumers.list(Streams.events.name)) names.push(c.name);
    expect(names).toEqual([PROJECTORS_DURABLE]);
    const info = await env.store.jsm.consumers.info(Streams.events.name, PROJECTORS_DURABLE);
    expect(info.config).toMatchObject({ ack_policy: 'all', filter_subject: 'bc.evt.>' });
  });

  it('a read model being rebuilt leaves the others served, then rejoins with every event', async () => {
    await using env = await startBackbone({ projectors: false });
    const slowNodes = defineProjection({
      ...nodesProjection,
      apply(db, event, metadata, position) {
        const until = performance.now() + 5;
        while (performance.now() < until);
        nodesProjection.apply(db, event, metadata, position);
      },
    });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    for (let i = 0; i < 400; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(`n${i + k}`), actor: 'test' })));
    }
    const group = groupOf(env, [slowNodes, sitesProjection]);
    await group.start();
    try {
      const [nodes, sites] = [group.member('nodes'), group.member('sites')];
      await waitForCheckpoint(nodes, await env.store.streamLastSequence(), 30_000, env.store);
      let rebuilding = true;
      const rebuilt = nodes.rebuild().finally(() => (rebuilding = false));
      const during = await env.bus.execute({ name: 'site.create', payload: { siteId: 'during', name: 'x' }, actor: 'test' });
      await waitForCheckpoint(sites, during.seq);
      expect(rebuilding).toBe(true);
      expect((await nodes.status()).rebuilding).toBe(true);
      expect(listSites(sites.db).map((s) => s.siteId)).toEqual(['dc1', 'during']);
      await rebuilt;
      const after = await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('late'), actor: 'test' });
      await waitForCheckpoint(nodes, after.seq);
      expect((nodes.db.prepare('SELECT count(*) AS n FROM nodes').get() as { n: number }).n).toBe(401);
    } finally {
      await group.stop();
    }
  });

  it('a read model whose batch fails catches up alone while the others keep going', async () => {
    await using env = await startBackbone({ projectors: false });
    let failures = 3;
    const flakyNodes = defineProjection({
      ...nodesProjection,
      apply(db, event, metadata, position) {
        if (event.type === 'NodeEnrolled' && failures-- > 0) throw new Error('SQLITE_IOERR: transient');
        nodesProjection.apply(db, event, metadata, position);
      },
    });
    const group = groupOf(env, [flakyNodes, sitesProjection]);
    await group.start();
    try {
      await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
      const enrolled = await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 'test' });
      const site = await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc2', name: 'DC 2' }, actor: 'test' });
      await waitForCheckpoint(group.member('sites'), site.seq);
      await waitForCheckpoint(group.member('nodes'), site.seq, 20_000, env.store);
      expect(failures).toBeLessThan(0);
      expect(group.member('nodes').db.prepare('SELECT last_seq AS seq FROM nodes').all()).toEqual([{ seq: enrolled.seq }]);
    } finally {
      await group.stop();
    }
  });
});
