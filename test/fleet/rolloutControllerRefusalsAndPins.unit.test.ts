import { describe, it } from 'vitest';
import type { RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import { idFor } from '../../schemas/ids.ts';
import type { ControllerInput } from '../../services/processes/rolloutController/controllerModel.ts';
import { givenInputs, observed } from './rolloutControllerSpec.ts';
import { reported, started } from './rolloutLog.ts';

const hosts = ['a1', 'b1', 'b2', 'b3'];
const ev = (event: RolloutEvent): ControllerInput => ({ type: 'event', event });
const id = 'nginx-1';
const T0 = Date.parse('2026-12-02T12:00:00.000Z');
const waveStarted = (wave: number, waveHosts: string[], at = 0) =>
  ev({ type: 'RolloutWaveStarted', data: { rolloutId: id, wave, hosts: waveHosts, deadline: new Date(T0 + at + 60_000).toISOString() } });
const outcome = (host: string, value: string) => ({
  command: 'fleet.recordHostOutcome',
  payload: { rolloutId: id, host, outcome: value },
  commandId: idFor('rollout-outcome', `${id}/${host}`),
});
const pin = (host: string, version: string) => ({
  command: 'fleet.pinModule',
  payload: { nodeId: host, module: 'nginx', version },
  commandId: idFor('rollout-pin', `${id}/${host}`),
});
/** The host's signed answer that it did not apply `commandId` (as `applyResults.ts` hands it on once verified). */
const refused = (host: string, commandId: string, version = '1.26.1'): ControllerInput => ({
  type: 'refused',
  refusal: { kind: 'apply-refused', commandId, rolloutId: id, host, module: 'nginx', version, reason: 'BUNDLE_DIGEST' },
});
const applyId = (host: string, wave: number) => idFor('rollout-apply', `${id}/${wave}/${host}`);
const canaryStarted = [ev(started(hosts)), waveStarted(0, ['a1'])];
const completed = ev({ type: 'RolloutCompleted', data: { rolloutId: id } });

describe('rollout controller: refused applies', () => {
  it("records failed as soon as a host refuses its wave's apply, not at the deadline; a redelivery records the same", () => {
    const spec = givenInputs(canaryStarted);
    spec.when(refused('a1', applyId('a1', 0))).then([{ key: id, effects: [outcome('a1', 'failed')] }]);
    spec.redelivered(refused('a1', applyId('a1', 0))).then([{ key: id, effects: [outcome('a1', 'failed')] }]);
  });

  it('a refusal is kept: a later heartbeat of the old version, or a restart resyncing on its first tick, still reads failed', () => {
    const spec = givenInputs([...canaryStarted, refused('a1', applyId('a1', 0)), observed('a1', '1.24.0', T0 + 2_000)]);
    spec.when({ type: 'tick', now: T0 + 3_000 }).then([{ key: id, effects: [outcome('a1', 'failed')], coalesce: true }]);
  });

  it('counts towards the breaker in a later wave: each refusing host is recorded failed', () => {
    const wave1 = [...canaryStarted, ev(reported('a1', 0, 'healthy')), waveStarted(1, ['b1', 'b2'], 10_000)];
    const spec = givenInputs(wave1);
    spec.when(refused('b1', applyId('b1', 1))).then([{ key: id, effects: [outcome('b1', 'failed')] }]);
    spec.when(refused('b2', applyId('b2', 1))).then([{ key: id, effects: [outcome('b2', 'failed')] }]);
  });

  it("ignores a refusal of another command (another wave's, a host not started) and of an ended rollout", () => {
    givenInputs(canaryStarted)
      .when(refused('a1', applyId('a1', 1)))
      .then([]);
    givenInputs(canaryStarted)
      .when(refused('b1', applyId('b1', 1)))
      .then([]);
    givenInputs([...canaryStarted, ev({ type: 'RolloutAborted', data: { rolloutId: id } })])
      .when(refused('a1', applyId('a1', 0)))
      .then([]);
  });

  it('a refused restore in a rollback is recorded as a failed restore', () => {
    const rollback = ev({ type: 'RolloutRollbackStarted', data: { rolloutId: id, version: '1.24.0', targets: ['a1'] } });
    givenInputs([...canaryStarted, ev(reported('a1', 0, 'failed')), rollback])
      .when(refused('a1', idFor('rollout-restore', `${id}/a1`), '1.24.0'))
      .then([
        {
          key: id,
          effects: [
            {
              command: 'fleet.recordHostRestored',
              payload: { rolloutId: id, host: 'a1', outcome: 'failed' },
              commandId: idFor('rollout-restored', `${id}/a1`),
            },
          ],
        },
      ]);
  });
});

describe('rollout controller: a rollout that ends pins its hosts', () => {
  const allHealthy = [
    ...canaryStarted,
    ev(reported('a1', 0, 'healthy')),
    waveStarted(1, ['b1', 'b2']),
    ev(reported('b1', 1, 'healthy')),
    ev(reported('b2', 1, 'healthy')),
    waveStarted(2, ['b3']),
    ev(reported('b3', 2, 'healthy')),
  ];

  it('completed: each host that reported healthy is pinned to the new version, with an id per rollout and host', () => {
    const spec = givenInputs(allHealthy);
    spec.when(completed).then([{ key: id, effects: ['a1', 'b1', 'b2', 'b3'].map((h) => pin(h, '1.26.1')) }]);
    // Redelivered, or read again after a restart: the same ids, which the bus answers as duplicates.
    spec.redelivered(completed).then([{ key: id, effects: ['a1', 'b1', 'b2', 'b3'].map((h) => pin(h, '1.26.1')) }]);
  });

  it('aborted mid-way: the healthy hosts are pinned, failed, timed-out and never-asked hosts keep their pin', () => {
    const partial = [...canaryStarted, ev(reported('a1', 0, 'healthy')), waveStarted(1, ['b1', 'b2']), ev(reported('b1', 1, 'timed-out'))];
    givenInputs(partial)
      .when(ev({ type: 'RolloutAborted', data: { rolloutId: id } }))
      .then([{ key: id, effects: [pin('a1', '1.26.1')] }]);
  });

  it('rolled back: a restored host is pinned to the previous version, one not restored keeps its pin', () => {
    const wave1 = [...canaryStarted, ev(reported('a1', 0, 'healthy')), waveStarted(1, ['b1', 'b2'])];
    const halted = [...wave1, ev(reported('b1', 1, 'healthy')), ev(reported('b2', 1, 'failed'))];
    const rollback = ev({ type: 'RolloutRollbackStarted', data: { rolloutId: id, version: '1.24.0', targets: ['a1', 'b1', 'b2'] } });
    const restoredAs = (host: string, value: 'healthy' | 'failed') => ev({ type: 'RolloutHostRestored', data: { rolloutId: id, host, outcome: value } });
    givenInputs([...halted, rollback, restoredAs('a1', 'healthy'), restoredAs('b1', 'failed'), restoredAs('b2', 'healthy')])
      .when(ev({ type: 'RolloutRolledBack', data: { rolloutId: id, restored: ['a1', 'b2'], failed: ['b1'] } }))
      .then([{ key: id, effects: [pin('a1', '1.24.0'), pin('b2', '1.24.0')] }]);
  });

  it('pins nothing for a rollout that is not the current one (a redelivered end after the next rollout started)', () => {
    const next = ev(started(hosts, 2));
    givenInputs([...allHealthy, completed, next])
      .redelivered(completed)
      .then([]);
  });
});
