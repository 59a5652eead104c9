import { moduleOfRollout, RecordHostOutcome, RecordHostRestored, StartWave } from '../../../schemas/fleet/rolloutCommands.ts';
import type { RolloutEvent } from '../../../schemas/fleet/rolloutEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { decideProgress, evolveProgress, outcomeOf } from './progress.ts';
import { rolloutAggregate } from './rollout.ts';
import { runOf } from './rolloutPlan.ts';
import { waveOf } from './waves.ts';

/*
 * The seam of the rollout controller (a reactor of its own, issue 35): it asks `decideProgress` of the folded state
 * what to do, sends `module.apply` to a wave's hosts after `fleet.startWave`, and turns their heartbeats (or the wave's
 * deadline) into `fleet.recordHostOutcome`; in a rollback it restores the targets and sends `fleet.recordHostRestored`.
 * Each is idempotent: a redelivered command, or one about a rollout that has ended, appends nothing.
 */

/** `fleet.startWave`: the next wave starts, only when the rollout runs and every host of the wave before is healthy. */
export const startWave = defineCommand({
  name: 'fleet.startWave',
  exposure: ['engine'],
  schema: StartWave,
  aggregate: rolloutAggregate,
  aggregateId: (command) => moduleOfRollout(command.rolloutId),
  decide(command, state, { now }): RolloutEvent[] {
    const found = runOf(state, command.rolloutId);
    if ('ended' in found) return [];
    const { run } = found;
    if (command.wave < run.progress.startedWaves) return [];
    if (run.status !== 'running') throw new DomainError('ILLEGAL_TRANSITION', `rollout ${run.rolloutId} is ${run.status}: no wave starts`);
    const next = decideProgress(run.progress);
    if (next.action !== 'start_wave' || next.wave !== command.wave) {
      const why = next.action === 'wait' ? `wave ${next.wave} waits for ${next.pending.join(', ')}` : `the next wave is ${run.progress.startedWaves}`;
      throw new DomainError('ILLEGAL_TRANSITION', `rollout ${run.rolloutId} cannot start wave ${command.wave}: ${why}`);
    }
    const deadline = new Date(Date.parse(now) + run.options.waveTimeoutMs).toISOString();
    return [{ type: 'RolloutWaveStarted', data: { rolloutId: run.rolloutId, wave: next.wave, hosts: [...next.hosts], deadline } }];
  },
});

/**
 * `fleet.recordHostOutcome`: a host's first report of the new version counts, and decides the halt (canary failed,
 * breaker tripped, wave failed) or the completion as it arrives. A host not in the rollout is NOT_FOUND; one whose wave
 * was not started is refused (a report from a host not yet asked is not trusted).
 */
export const recordHostOutcome = defineCommand({
  name: 'fleet.recordHostOutcome',
  exposure: ['engine'],
  schema: RecordHostOutcome,
  aggregate: rolloutAggregate,
  aggregateId: (command) => moduleOfRollout(command.rolloutId),
  decide(command, state): RolloutEvent[] {
    const found = runOf(state, command.rolloutId);
    if ('ended' in found) return [];
    const { run } = found;
    const { progress } = run;
    const wave = waveOf(progress.waves, command.host);
    if (wave < 0) throw new DomainError('NOT_FOUND', `host ${command.host} is not in rollout ${run.rolloutId}`);
    if (outcomeOf(progress.outcomes, command.host) !== undefined || run.status === 'aborted' || run.status === 'completed') return [];
    if (wave >= progress.startedWaves) {
      throw new DomainError('ILLEGAL_TRANSITION', `host ${command.host} is in wave ${wave}, not started yet: its report is not trusted`);
    }
    const rolloutId = run.rolloutId;
    const events: RolloutEvent[] = [{ type: 'RolloutHostReported', data: { rolloutId, host: command.host, wave, outcome: command.outcome } }];
    const after = evolveProgress(progress, { type: 'HostReported', host: command.host, outcome: command.outcome }, run.options);
    if (progress.halted === null && after.halted !== null) {
      events.push({ type: 'RolloutHalted', data: { rolloutId, reason: after.halted.reason, failed: [...after.halted.failed] } });
    } else if (decideProgress(after).action === 'complete') {
      events.push({ type: 'RolloutCompleted', data: { rolloutId } });
    }
    return events;
  },
});

/** `fleet.recordHostRestored`: a rollback target's first report of the previous version; the last one ends the rollback. */
export const recordHostRestored = defineCommand({
  name: 'fleet.recordHostRestored',
  exposure: ['engine'],
  schema: RecordHostRestored,
  aggregate: rolloutAggregate,
  aggregateId: (command) => moduleOfRollout(command.rolloutId),
  decide(command, state): RolloutEvent[] {
    const found = runOf(state, command.rolloutId);
    if ('ended' in found) return [];
    const { run } = found;
    if (run.rollback === null) throw new DomainError('ILLEGAL_TRANSITION', `rollout ${run.rolloutId} is ${run.status}, not rolling back`);
    if (!run.rollback.targets.includes(command.host)) throw new DomainError('NOT_FOUND', `host ${command.host} is not a rollback target of ${run.rolloutId}`);
    if (run.status !== 'rolling-back' || outcomeOf(run.rollback.restored, command.host) !== undefined) return [];
    const rolloutId = run.rolloutId;
    const restored = { ...run.rollback.restored, [command.host]: command.outcome };
    const events: RolloutEvent[] = [{ type: 'RolloutHostRestored', data: { rolloutId, host: command.host, outcome: command.outcome } }];
    if (run.rollback.targets.every((host) => outcomeOf(restored, host) !== undefined)) events.push(rolledBack(rolloutId, run.rollback.targets, restored));
    return events;
  },
});

/** The end of a rollback: which targets run the previous version healthy and which did not say so. */
export function rolledBack(rolloutId: string, targets: readonly string[], restored: Readonly<Record<string, string>>): RolloutEvent {
  return {
    type: 'RolloutRolledBack',
    data: {
      rolloutId,
      restored: targets.filter((host) => restored[host] === 'healthy'),
      failed: targets.filter((host) => restored[host] !== 'healthy'),
    },
  };
}

export const rolloutControllerCommands = [startWave, recordHostOutcome, recordHostRestored] as const;
