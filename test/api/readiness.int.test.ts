import { describe, expect, it } from 'vitest';
import { allProjections } from '../../projections/catalog.ts';
import { ProjectorGroup } from '../../services/projectors/projectorGroup.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { createMetrics } from '../../services/api/metrics.ts';
import { buildApi } from '../../services/api/server.ts';
import { startBackbone } from '../support/backboneFixture.ts';

interface Readyz {
  status: string;
  startSeq: number | null;
  projections: { projection: string; checkpoint: number | null }[];
}

describe('/readyz', () => {
  it('answers not-ready until every read model caught up with the log as it was at start, however small its lag', { timeout: 60_000 }, async () => {
    await using env = await startBackbone();
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc0', name: 'DC 0' }, actor: 'test' });
    // The projectors are held back: their files exist at an early checkpoint while the log grows past it.
    for (const projector of env.projectors.values()) await projector.stop();
    for (let i = 1; i <= 20; i++) await env.bus.execute({ name: 'site.create', payload: { siteId: `dc${i}`, name: `DC ${i}` }, actor: 'test' });
    const logAtStart = await env.store.streamLastSequence();

    // The API process starts now; its lag bound (1,000) is far above the 20 events the read models are behind.
    const app = await buildApi({ ...env, metrics: createMetrics() }, env.log);
    try {
      await expect.poll(async () => (await app.inject({ url: '/readyz' })).json<Readyz>().startSeq, { timeout: 10_000 }).not.toBeNull();
      const held = await app.inject({ url: '/readyz' });
      const body = held.json<Readyz>();
      expect([held.statusCode, body.status]).toEqual([503, 'not-ready']);
      // The bootstrap admin token the API wrote at start may be in the mark: it was in the log when it started.
      expect(body.startSeq).toBeGreaterThanOrEqual(logAtStart);
      expect(body.projections.every((p) => p.checkpoint !== null && p.checkpoint < logAtStart)).toBe(true);

      // Released, the read models catch up, and only then is the process ready.
      const group = new ProjectorGroup(
        env.store,
        allProjections.map((projection) => ({ projection, files: new ReadModelFiles(env.dataDir, projection.name) })),
        env.log,
      );
      await group.start();
      try {
        await expect.poll(async () => (await app.inject({ url: '/readyz' })).statusCode, { timeout: 20_000 }).toBe(200);
        const ready = (await app.inject({ url: '/readyz' })).json<Readyz>();
        expect(ready.projections.every((p) => p.checkpoint! >= ready.startSeq!)).toBe(true);
      } finally {
        await group.stop();
      }
    } finally {
      await app.close();
    }
  });
});
