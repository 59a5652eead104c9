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
/** Wave `wave` started at T0 + `at` (the test options give each wave 60 s). */
const waveStarted = (wave: number, waveHosts: string[], at = 0) =>
  ev({ type: 'RolloutWaveStarted', data: { rolloutId: id, wave, hosts: waveHosts, deadline: new Date(T0 + at + 60_000).toISOString() } });
const tick = (at: number): ControllerInput => ({ type: 'tick', now: T0 + at });
const startWave = (wave: number) => ({ command: 'fleet.startWave', payload: { rolloutId: id, wave }, commandId: idFor('rollout-wave', `${id}/${wave}`) });
const apply = (host: string, wave: number, version = '1.26.1') => ({
  kind: 'task',
  task: { type: 'module.apply', commandId: idFor('rollout-apply', `${id}/${wave}/${host}`), rolloutId: id, host, module: 'nginx', version },
});
const outcome = (host: string, value: string) => ({
  command: 'fleet.recordHostOutcome',
  payload: { rolloutId: id, host, outcome: value },
  commandId: idFor('rollout-outcome', `${id}/${host}`),
});
const restored = (host: string, value: string) => ({
  command: 'fleet.recordHostRestored',
  payload: { rolloutId: id, host, outcome: value },
  commandId: idFor('rollout-restored', `${id}/${host}`),
});
const canaryStarted = [ev(started(hosts)), waveStarted(0, ['a1'])];

describe('rollout controller (reactions as data)', () => {
  it('asks for the canary wave when a rollout starts', () => {
    givenInputs([])
      .when(ev(started(hosts)))
      .then([{ key: id, effects: [startWave(0)] }]);
  });

  it('under an approver quorum, asks for the canary only once the rollout is approved', () => {
    const awaiting = started(hosts, 1, {}, 2);
    const { planDigest } = awaiting.data as { planDigest: string };
    const spec = givenInputs([]);
    spec.when(ev(awaiting)).then([]);
    spec.when(ev({ type: 'RolloutApprovalRecorded', data: { rolloutId: id, approverId: 'ap1', planDigest } })).then([]);
    spec.when(ev({ type: 'RolloutApproved', data: { rolloutId: id, planDigest, approvers: ['ap1', 'ap2'] } })).then([{ key: id, effects: [startWave(0)] }]);
  });

  it('sends module.apply of the new version to each host of a started wave, with an id per rollout, wave and host', () => {
    givenInputs([ev(started(hosts))])
      .when(waveStarted(0, ['a1']))
      .then([{ key: id, effects: [apply('a1', 0)] }]);
    const canaryDone = [...canaryStarted, ev(reported('a1', 0, 'healthy'))];
    givenInputs(canaryDone)
      .when(waveStarted(1, ['b1', 'b2']))
      .then([{ key: id, effects: [apply('b1', 1), apply('b2', 1)] }]);
  });

  it('a redelivered wave start sends the same commands (same ids); one redelivered after a halt sends nothing', () => {
    const spec = givenInputs(canaryStarted);
    spec.redelivered(waveStarted(0, ['a1'])).then([{ key: id, effects: [apply('a1', 0)] }]);
    spec.when(ev(reported('a1', 0, 'failed')));
    spec.when(ev({ type: 'RolloutHalted', data: { rolloutId: id, reason: 'canary_failed', failed: ['a1'] } }));
    spec.redelivered(waveStarted(0, ['a1'])).then([]);
  });

  it('a resume sends module.apply again (same id) to the hosts of the started wave that have not reported', () => {
    const spec = givenInputs(canaryStarted);
    spec.when({ type: 'event', event: { type: 'RolloutPaused', data: { rolloutId: id } } }).then([]);
    spec.when(ev({ type: 'RolloutResumed', data: { rolloutId: id } })).then([{ key: id, effects: [apply('a1', 0)] }]);
  });

  it('records healthy when a host of a started wave reports the new version with every probe passing', () => {
    givenInputs(canaryStarted)
      .when(observed('a1', '1.26.1', T0 + 5_000))
      .then([{ key: id, effects: [outcome('a1', 'healthy')] }]);
  });

  it('records failed when the new version reports a failing probe, or a digest other than the published one', () => {
    const failing = observed('a1', '1.26.1', T0 + 5_000, { state: 'failed', probes: [{ name: 'http', ok: false }] });
    givenInputs(canaryStarted)
      .when(failing)
      .then([{ key: id, effects: [outcome('a1', 'failed')] }]);
    const published = ev({
      type: 'ModuleVersionPublished',
      data: {
        module: 'nginx',
        version: '1.26.1',
        bundleSha256: 'b'.repeat(64),
        manifestSha256: 'c'.repeat(64),
        publisherId: 'p',
        manifest: { probes: [{ name: 'http' }] } as never,
      },
    } as never);
    givenInputs([published, ...canaryStarted])
      .when(observed('a1', '1.26.1', T0 + 5_000))
      .then([{ key: id, effects: [outcome('a1', 'failed')] }]);
    // `current` switched, its probes not run yet: an active report without the declared probe is not judged.
    givenInputs([published, ...canaryStarted])
      .when(observed('a1', '1.26.1', T0 + 5_000, { digest: 'c'.repeat(64), probes: [] }))
      .then([]);
    givenInputs([published, ...canaryStarted])
      .when(observed('a1', '1.26.1', T0 + 5_000, { digest: 'c'.repeat(64) }))
      .then([{ key: id, effects: [outcome('a1', 'healthy')] }]);
  });

  it('waits on the old version, a pending one, or a report from before the wave started', () => {
    givenInputs(canaryStarted)
      .when(observed('a1', '1.24.0', T0 + 5_000))
      .then([]);
    givenInputs(canaryStarted)
      .when(observed('a1', '1.26.1', T0 + 5_000, { state: 'pending' }))
      .then([]);
    givenInputs(canaryStarted)
      .when(observed('a1', '1.26.1', T0 - 1))
      .then([]);
    givenInputs(canaryStarted)
      .when(observed('b1', '1.26.1', T0 + 5_000))
      .then([]);
  });

  it("a heartbeat past the deadline records its own host's report only: deadlines are read on ticks", () => {
    const late = [...canaryStarted, tick(61_000)];
    givenInputs(late)
      .when(observed('a1', '1.24.0', T0 + 61_000))
      .then([]);
    givenInputs(late)
      .when(observed('a1', '1.26.1', T0 + 61_000))
      .then([{ key: id, effects: [outcome('a1', 'healthy')] }]);
  });

  it('records timed-out once the wave deadline passed without a report: absence is never healthy', () => {
    givenInputs(canaryStarted).when(tick(60_000)).then([]);
    givenInputs(canaryStarted)
      .when(tick(60_001))
      .then([{ key: id, effects: [outcome('a1', 'timed-out')], coalesce: true }]);
    givenInputs([...canaryStarted, observed('a1', '1.26.1', T0 + 5_000)])
      .when(tick(60_001))
      .then([{ key: id, effects: [outcome('a1', 'healthy')], coalesce: true }]);
  });

  it('asks for the next wave once every host of the canary reported healthy, and not after a failure', () => {
    givenInputs(canaryStarted)
      .when(ev(reported('a1', 0, 'healthy')))
      .then([{ key: id, effects: [startWave(1)] }]);
    const halted = givenInputs(canaryStarted);
    halted.when(ev(reported('a1', 0, 'failed'))).then([]);
    halted.when(ev({ type: 'RolloutHalted', data: { rolloutId: id, reason: 'canary_failed', failed: ['a1'] } })).then([]);
    halted.when(tick(120_000)).then([]);
  });

  it('sends nothing new while paused: no wave starts, no apply; a report of the wave in flight still counts', () => {
    const paused = [...canaryStarted, ev({ type: 'RolloutPaused', data: { rolloutId: id } })];
    givenInputs(paused)
      .when(ev(reported('a1', 0, 'healthy')))
      .then([]);
    givenInputs(paused)
      .when(waveStarted(0, ['a1']))
      .then([]);
    givenInputs(paused)
      .when(observed('a1', '1.26.1', T0 + 5_000))
      .then([{ key: id, effects: [outcome('a1', 'healthy')] }]);
  });

  it('sends nothing about an ended rollout', () => {
    const ended = [...canaryStarted, ev({ type: 'RolloutAborted', data: { rolloutId: id } })];
    givenInputs(ended)
      .when(observed('a1', '1.26.1', T0 + 5_000))
      .then([]);
    givenInputs(ended).when(tick(120_000)).then([]);
    givenInputs(ended)
      .when(waveStarted(0, ['a1']))
      .then([]);
  });

  it('in a rollback, applies the previous version to each target and records what they report of it', () => {
    const failed = [...canaryStarted, ev(reported('a1', 0, 'failed')), tick(10_000)];
    const rollback = ev({ type: 'RolloutRollbackStarted', data: { rolloutId: id, version: '1.24.0', targets: ['a1'] } });
    const restore = {
      kind: 'task',
      task: { type: 'module.apply', commandId: idFor('rollout-restore', `${id}/a1`), rolloutId: id, host: 'a1', module: 'nginx', version: '1.24.0' },
    };
    givenInputs(failed)
      .when(rollback)
      .then([{ key: id, effects: [restore] }]);
    givenInputs([...failed, rollback])
      .when(observed('a1', '1.26.1', T0 + 11_000))
      .then([]);
    givenInputs([...failed, rollback])
      .when(observed('a1', '1.24.0', T0 + 11_000))
      .then([{ key: id, effects: [restored('a1', 'healthy')] }]);
    givenInputs([...failed, rollback])
      .when(observed('a1', '1.24.0', T0 + 9_000))
      .then([]);
    givenInputs([...failed, rollback])
      .when(tick(70_001))
      .then([{ key: id, effects: [restored('a1', 'timed-out')], coalesce: true }]);
  });
});
