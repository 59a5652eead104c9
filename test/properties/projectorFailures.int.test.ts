import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Projection } from '../../projections/runtime/projection.ts';
import { Projector } from '../../services/projectors/projector.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { sitesProjection } from '../../projections/sites/projector.ts';
import { listSites } from '../../projections/sites/queries.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { waitForCheckpoint } from './harness.ts';

describe('projector failures', () => {
  it('projector retries a batch that failed once instead of moving past it (regression: AckAll skipped a nak’d batch)', async () => {
    await using env = await startBackbone({ projectors: false });
    let failures = 1;
    const flaky: Projection = {
      ...sitesProjection,
      apply(db, event, metadata, position) {
        if (failures-- > 0) throw new Error('SQLITE_IOERR: transient');
        sitesProjection.apply(db, event, metadata, position);
      },
    };
    const projector = new Projector(env.store, flaky, new ReadModelFiles(env.dataDir, 'sites'), env.log);
    await projector.start();
    try {
      await env.bus.execute({ name: 'site.create', payload: { siteId: 'first', name: 'x' }, actor: 't' });
      await sleep(50);
      const second = await env.bus.execute({ name: 'site.create', payload: { siteId: 'second', name: 'x' }, actor: 't' });
      await waitForCheckpoint(projector, second.seq);
      expect(listSites(projector.db).map((s) => s.siteId)).toEqual(['first', 'second']);
    } finally {
      await projector.stop();
    }
  });

  it('projector restarted while messages are in flight still projects every one (regression: delivered-but-unapplied messages were skipped)', async () => {
    for (let attempt = 0; attempt < 6; attempt++) {
      await using env = await startBackbone({ projectors: false });
      const files = () => new ReadModelFiles(env.dataDir, 'sites');
      const first = new Projector(env.store, sitesProjection, files(), env.log);
      await first.start();
      const ids = Array.from({ length: 40 }, (_, i) => `s${String(i).padStart(2, '0')}`);
      const trickle = (async () => {
        for (const siteId of ids) await env.bus.execute({ name: 'site.create', payload: { siteId, name: 'x' }, actor: 't' });
      })();
      await sleep(2 + attempt * 3);
      await first.stop();
      const second = new Projector(env.store, sitesProjection, files(), env.log);
      await second.start();
      try {
        await trickle;
        const last = await env.bus.execute({ name: 'site.create', payload: { siteId: 'zz', name: 'x' }, actor: 't' });
        await waitForCheckpoint(second, last.seq, 10_000);
        expect(
          listSites(second.db).map((s) => s.siteId),
          `attempt ${attempt}`,
        ).toEqual([...ids, 'zz']);
      } finally {
        await second.stop();
      }
    }
  });
});
