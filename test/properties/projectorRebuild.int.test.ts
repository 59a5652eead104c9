import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allProjections } from '../../projections/catalog.ts';
import { Projector } from '../../services/projectors/projector.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { withoutClock } from '../arbitraries/backbone.ts';
import { planWorkload, workloadArb } from '../arbitraries/workload.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { tempDir } from '../support/natsServer.ts';
import { dumpProjectors, runCommand, waitForCheckpoint } from './harness.ts';

describe('projector rebuild', () => {
  it('projector rebuild reproduces the tables live projection built for workloads of node operations, secrets and VPS, as does a fresh projector', async () => {
    await fc.assert(
      fc.asyncProperty(workloadArb({ minLength: 5, maxLength: 40 }), async (intents) => {
        await using env = await startBackbone();
        const { commands, sim: model } = await planWorkload(intents);
        const outcomes = [];
        for (const command of commands) outcomes.push(await runCommand(env.bus, command));
        // The bus on JetStream answers exactly what the pure model of the deciders predicts (up to the clock).
        expect(withoutClock(outcomes)).toEqual(withoutClock(model.outcomes));
        const last = await env.store.streamLastSequence();
        expect(last).toBe(model.messages.length);

        const projectors = [...env.projectors.values()];
        for (const p of projectors) await waitForCheckpoint(p, last);
        for (const r of env.readers.values()) expect(r.checkpoint()).toBe(last);
        const incremental = dumpProjectors(projectors);

        for (const p of projectors) await p.rebuild();
        expect(dumpProjectors(projectors)).toEqual(incremental);

        using dir = tempDir('bc-fresh-');
        // Same migrations and apply under another name, so its durable consumer does not disturb the live ones.
        const fresh = allProjections.map((projection) => {
          const renamed = { ...projection, name: `${projection.name}_fresh` };
          return new Projector(env.store, renamed, new ReadModelFiles(dir.path, renamed.name), env.log);
        });
        try {
          for (const p of fresh) await p.start();
          for (const p of fresh) await waitForCheckpoint(p, last);
          const rebuilt = dumpProjectors(fresh);
          expect(Object.fromEntries(Object.entries(rebuilt).map(([name, dump]) => [name.replace(/_fresh$/, ''), dump]))).toEqual(incremental);
        } finally {
          for (const p of fresh) await p.stop();
        }

        // Commands after a rebuild keep flowing into the swapped-in file.
        const after = await runCommand(env.bus, { name: 'site.create', payload: { siteId: 'after-rebuild', name: 'x' }, commandId: 'cmd-after-rebuild' });
        expect(after).toMatchObject({ kind: 'appended', seq: last + 1 });
        for (const p of projectors) await waitForCheckpoint(p, last + 1);
        expect(env.readers.get('sites')!.checkpoint()).toBe(last + 1);
      }),
      // A run that hangs (seen once in a loaded full run, cause not yet found) fails on its own with its seed and
      // workload, rather than the whole test timing out with nothing to reproduce it by; no shrinking, each run is
      // a whole backbone.
      { numRuns: 6, timeout: 60_000, endOnFailure: true },
    );
  });
});
