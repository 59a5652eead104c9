import { describe, expect, it } from 'vitest';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { defineProjection } from '../../projections/runtime/projection.ts';
import { Projector } from '../../services/projectors/projector.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { startApi } from '../support/apiFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';

const EVENTS = 3_000;
/** CPU each event costs the projection below: a read model whose rows are expensive to build. */
const EVENT_COST_MS = 2;

/** The nodes projection made slow, so that a rebuild of it takes seconds of CPU (about what a loaded machine sees). */
const slowNodes = defineProjection({
  ...nodesProjection,
  name: 'slow-nodes',
  apply(db, event, metadata, position) {
    const until = performance.now() + EVENT_COST_MS;
    while (performance.now() < until);
    nodesProjection.apply(db, event, metadata, position);
  },
});

describe('a rebuild during writes', () => {
  it(
    'a rebuild in the API’s own process never fails a command append (regression: appends answered 503 until a rebuild finished)',
    { timeout: 180_000 },
    async () => {
      // The API and the projectors share one process and one event loop here, as `serve api projector:…` does.
      await using env = await startApi();
      await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
      for (let i = 0; i < EVENTS; i += 100) {
        await Promise.all(Array.from({ length: 100 }, (_, k) => env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(`n${i + k}`), actor: 'test' })));
      }
      const projector = new Projector(env.store, slowNodes, new ReadModelFiles(env.dataDir, slowNodes.name), env.log);
      try {
        let rebuilding = true;
        const rebuilt = projector.rebuild().finally(() => (rebuilding = false));
        const answers: { status: number; code?: string; duringRebuild: boolean }[] = [];
        for (let i = 0; rebuilding; i++) {
          const res = await env.app.inject({
            method: 'POST',
            url: '/v1/commands/site.create',
            payload: { siteId: `w${i}`, name: 'written during the rebuild' },
          });
          answers.push({ status: res.statusCode, code: res.statusCode >= 300 ? res.json().code : undefined, duringRebuild: rebuilding });
        }
        await rebuilt;
        expect(answers.filter((a) => a.duringRebuild).length).toBeGreaterThan(1);
        expect(answers.filter((a) => a.status !== 201)).toEqual([]);
        expect((projector.db.prepare('SELECT count(*) AS n FROM nodes').get() as { n: number }).n).toBe(EVENTS);
      } finally {
        await projector.stop();
      }
    },
  );
});
