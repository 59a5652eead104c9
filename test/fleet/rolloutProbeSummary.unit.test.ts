import { describe, expect, it } from 'vitest';
import { fitReports, MODULES_HEARTBEAT_BUDGET, summarisePassed } from '../../daemon/node/modules/moduleState.ts';
import { HostModuleReport, passedProbeNames, passedProbesDigest } from '../../schemas/agent/hostModules.ts';
import type { RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import { idFor } from '../../schemas/ids.ts';
import type { ControllerInput } from '../../services/processes/rolloutController/controllerModel.ts';
import { givenInputs, observed } from './rolloutControllerSpec.ts';
import { started } from './rolloutLog.ts';

const id = 'nginx-1';
const T0 = Date.parse('2026-12-02T12:00:00.000Z');
const ev = (event: RolloutEvent): ControllerInput => ({ type: 'event', event });
const declared = ['http', 'tls', 'config'];
const published = ev({
  type: 'ModuleVersionPublished',
  data: { module: 'nginx', version: '1.26.1', manifestSha256: 'a'.repeat(64), publisherId: 'p', manifest: { probes: declared.map((name) => ({ name })) } },
} as never);
const canaryStarted = [
  published,
  ev(started(['a1', 'b1'])),
  ev({ type: 'RolloutWaveStarted', data: { rolloutId: id, wave: 0, hosts: ['a1'], deadline: new Date(T0 + 60_000).toISOString() } }),
];
const outcome = (value: string) => ({
  command: 'fleet.recordHostOutcome',
  payload: { rolloutId: id, host: 'a1', outcome: value },
  commandId: idFor('rollout-outcome', `${id}/a1`),
});

describe('a heartbeat over its module budget summarises the passing probes', () => {
  it('keeps failed probes listed and proves each passing one by count and digest, under the budget', () => {
    const long = (i: number) => `p${String(i).padStart(62, '0')}`;
    const reports: HostModuleReport[] = Array.from({ length: 256 }, (_, m) => ({
      name: `m${String(m).padStart(62, '0')}`,
      version: '1.0.0',
      digest: 'a'.repeat(64),
      state: m === 7 ? 'failed' : 'active',
      probes: Array.from({ length: 32 }, (_, i) => ({ name: long(i), ok: !(m === 7 && i === 3) })),
    }));
    expect(Buffer.byteLength(JSON.stringify(reports))).toBeGreaterThan(MODULES_HEARTBEAT_BUDGET);
    const fitted = fitReports(reports);
    expect(Buffer.byteLength(JSON.stringify(fitted))).toBeLessThanOrEqual(MODULES_HEARTBEAT_BUDGET);
    expect(fitted).toHaveLength(256);
    for (const report of fitted) expect(HostModuleReport.safeParse(report).success).toBe(true);
    const names = Array.from({ length: 32 }, (_, i) => long(i));
    expect(fitted[7]).toMatchObject({ state: 'failed', probes: [{ name: long(3), ok: false }], passed: { count: 31 } });
    expect(fitted[8]).toMatchObject({ probes: [], passed: { count: 32, digest: passedProbesDigest(names) } });
    // Whatever order the manifest declares them in, the reader proves every declared probe passed (but the failed one).
    expect(passedProbeNames(fitted[8]!, [...names].reverse())).toEqual(new Set(names));
    expect(passedProbeNames(fitted[7]!, names)).toEqual(new Set(names.filter((n) => n !== long(3))));
    // Under the budget nothing changes.
    expect(fitReports(reports.slice(0, 2))).toEqual(reports.slice(0, 2));
  });

  it('a summary proves nothing unless it matches the declared probes left out exactly', () => {
    const report = summarisePassed({
      name: 'nginx',
      version: '1.0.0',
      digest: 'a'.repeat(64),
      state: 'active',
      probes: declared.map((name) => ({ name, ok: true })),
    });
    expect(passedProbeNames(report, declared)).toEqual(new Set(declared));
    // The manifest declares a probe the host did not count: none of the summarised ones is taken on its word.
    expect(passedProbeNames(report, [...declared, 'dns'])).toEqual(new Set());
    expect(passedProbeNames({ ...report, passed: { count: 3, digest: passedProbesDigest(['http', 'tls', 'dns']) } }, declared)).toEqual(new Set());
  });

  it('the rollout controller judges a summarised report healthy, never a mismatched one, and a listed failure failed', () => {
    const summary = { count: 3, digest: passedProbesDigest(declared) };
    givenInputs(canaryStarted)
      .when(observed('a1', '1.26.1', T0 + 5_000, { probes: [], passed: summary }))
      .then([{ key: id, effects: [outcome('healthy')] }]);
    // A summary over other names (or a count short of the declared probes) is a report still missing them: not judged.
    givenInputs(canaryStarted)
      .when(observed('a1', '1.26.1', T0 + 5_000, { probes: [], passed: { count: 3, digest: passedProbesDigest(['http', 'tls', 'dns']) } }))
      .then([]);
    givenInputs(canaryStarted)
      .when(observed('a1', '1.26.1', T0 + 5_000, { probes: [], passed: { count: 2, digest: passedProbesDigest(['http', 'tls']) } }))
      .then([]);
    givenInputs(canaryStarted)
      .when(
        observed('a1', '1.26.1', T0 + 5_000, {
          state: 'failed',
          probes: [{ name: 'tls', ok: false }],
          passed: { count: 2, digest: passedProbesDigest(['http', 'config']) },
        }),
      )
      .then([{ key: id, effects: [outcome('failed')] }]);
  });
});
