import { describe, expect, it } from 'vitest';
import { runPass } from '../../services/autonomy/sensors/runPass.ts';
import { defaultSensorSettings } from '../../services/autonomy/sensors/sensor.ts';
import { templateClosureDriftSensor } from '../../services/autonomy/sensors/templateClosureDrift.ts';
import { readSnapshot } from '../../services/processes/fleetSensors/snapshotReader.ts';
import { startApi } from '../support/apiFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { publishNginx } from '../fleet/publishedModule.ts';

describe('template-closure-drift over the real snapshot: the modules read model resolved again each pass', () => {
  it(
    'is quiet while a host is in sync, signals when its template is widened, and names the conflict when it no longer resolves',
    { timeout: 120_000 },
    async () => {
      await using env = await startApi();
      const { bus } = env;
      const operator = { actor: 'test' };
      await publishNginx(env.app, bus, ['1.24.0', '1.26.1']);
      await bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), ...operator });
      const define = (range: string) =>
        bus.execute({ name: 'fleet.defineTemplate', payload: { templateId: 'web', requires: [{ module: 'nginx', range }] }, ...operator });
      await define('~1.24');
      await bus.execute({ name: 'fleet.assignTemplate', payload: { nodeId: 'n1', template: 'web' }, ...operator });
      // A host with pins only has no template to lag behind: it is not in the closures.
      await bus.execute({ name: 'metal.enroll', payload: enrollPayload('n2'), ...operator });
      const pinsOnly = await bus.execute({ name: 'fleet.pinModule', payload: { nodeId: 'n2', module: 'nginx', version: '1.24.0' }, ...operator });
      const sources = { nodes: env.readers.get('nodes')!, modules: env.readers.get('modules')! };
      const pass = async (seq: number) => {
        await sources.nodes.waitFor(seq, 5_000);
        await sources.modules.waitFor(seq, 5_000);
        const snapshot = await readSnapshot(env.nc, sources, { now: new Date(), stepTimeoutMs: 3_600_000, controlPlaneNodes: [] });
        const { signals, reports } = runPass([templateClosureDriftSensor], snapshot, defaultSensorSettings);
        expect(reports).toEqual([{ sensor: 'template-closure-drift', ok: true, assessed: 1, signals: signals.length }]);
        return { snapshot, signals };
      };

      const inSync = await pass(pinsOnly.seq);
      expect(inSync.snapshot.templateClosures).toEqual([
        {
          nodeId: 'n1',
          template: 'web',
          pinnedDigest: inSync.snapshot.assignments.find((a) => a.nodeId === 'n1')!.planDigest,
          now: { ok: true, planDigest: inSync.snapshot.assignments.find((a) => a.nodeId === 'n1')!.planDigest, changes: [] },
        },
      ]);
      expect(inSync.signals).toEqual([]);

      // Widening the range changes nothing on the host (its plan stays 1.24.0): the signal says it lags.
      const widened = await define('^1.24');
      const lagging = await pass(widened.seq);
      expect(lagging.snapshot.assignments.find((a) => a.nodeId === 'n1')!.modules.map((m) => m.version)).toEqual(['1.24.0']);
      expect(lagging.signals.map((s) => [s.kind, s.key, s.facts])).toEqual([
        ['template-closure-drift', 'n1', { template: 'web', modules: 'nginx', changes: 'nginx 1.24.0 -> 1.26.1' }],
      ]);

      const impossible = await define('^3');
      const conflicting = await pass(impossible.seq);
      expect(conflicting.signals.map((s) => [s.key, s.facts])).toEqual([['n1', { template: 'web', conflicts: 'RANGE_UNSATISFIABLE:nginx' }]]);

      // Applying the template again brings the host up to it: quiet once more.
      await define('^1.24');
      const applied = await bus.execute({ name: 'fleet.assignTemplate', payload: { nodeId: 'n1', template: 'web' }, ...operator });
      expect((await pass(applied.seq)).signals).toEqual([]);
    },
  );
});
