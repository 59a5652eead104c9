import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import type { HostOutcome } from '../../schemas/fleet/rolloutWaves.ts';
import { recordHostOutcome, recordHostRestored, startWave } from '../../services/fleet/rollout/controllerCommands.ts';
import { abortRollout, continueRollout, pauseRollout, resumeRollout, rollbackRollout } from '../../services/fleet/rollout/operatorCommands.ts';
import { decideProgress } from '../../services/fleet/rollout/progress.ts';
import { rolloutAggregate, type RolloutState } from '../../services/fleet/rollout/rollout.ts';
import type { CommandDefinition } from '../../services/platform/commands/commandDefinition.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { started } from './rolloutLog.ts';

const context = { commandId: 'cmd-prop-01', actor: 'prop', now: '2026-12-02T12:00:00.000Z', dependencies: undefined };
const hostIds = fc.uniqueArray(fc.stringMatching(/^[a-z0-9]{1,8}$/), { minLength: 1, maxLength: 30 });
const outcome = fc.constantFrom<HostOutcome>('healthy', 'healthy', 'healthy', 'failed', 'timed-out');
const id = { rolloutId: 'nginx-1' };

type Step = { command: CommandDefinition<string, any, RolloutState, RolloutEvent>; payload: unknown };

/** What an operator or the controller might send next, from what the state shows (a few things at random besides). */
function nextStep(state: RolloutState, pick: number, report: HostOutcome, hosts: readonly string[]): Step {
  const run = state.current!;
  const operator = [pauseRollout, resumeRollout, continueRollout, rollbackRollout, abortRollout];
  if (pick % 7 === 0) return { command: operator[pick % operator.length]!, payload: id };
  const decision = decideProgress(run.progress);
  if (run.rollback !== null) {
    const pending = run.rollback.targets.filter((h) => !Object.hasOwn(run.rollback!.restored, h));
    const host = pending[pick % Math.max(1, pending.length)] ?? run.rollback.targets[0] ?? hosts[0]!;
    return { command: recordHostRestored, payload: { ...id, host, outcome: report } };
  }
  if (decision.action === 'start_wave') return { command: startWave, payload: { ...id, wave: decision.wave } };
  if (decision.action === 'wait')
    return { command: recordHostOutcome, payload: { ...id, host: decision.pending[pick % decision.pending.length], outcome: report } };
  const touched = run.progress.waves.slice(0, run.progress.startedWaves).flat();
  const pending = touched.filter((h) => !Object.hasOwn(run.progress.outcomes, h));
  if (pending.length > 0) return { command: recordHostOutcome, payload: { ...id, host: pending[pick % pending.length], outcome: report } };
  return { command: operator[pick % operator.length]!, payload: id };
}

function decide(step: Step, state: RolloutState): RolloutEvent[] | string {
  try {
    return [...step.command.decide(step.command.schema.parse(step.payload), state, context)];
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
}

const fold = (state: RolloutState, events: readonly RolloutEvent[]) => events.reduce((s, e) => rolloutAggregate.evolve(s, e), state);

describe('fleet.rollout deciders (properties)', () => {
  it('a command sent again right after it was decided appends nothing; a canary failure touches nobody beyond the canary; rollback targets are the hosts that reported the new version applied', () => {
    fc.assert(
      fc.property(
        hostIds,
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 10, max: 100 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.tuple(fc.nat(), outcome), { minLength: 1, maxLength: 120 }),
        (hosts, canarySize, wavePercent, maxConsecutiveFailures, steps) => {
          let state = fold(rolloutAggregate.initialState, [started(hosts, 1, { canarySize, wavePercent, maxConsecutiveFailures })]);
          const canary = new Set(state.current!.progress.waves[0]);
          let canaryFailed = false;
          for (const [pick, report] of steps) {
            const step = nextStep(state, pick, report, hosts);
            const events = decide(step, state);
            if (typeof events === 'string') {
              // A refusal changes nothing, and is refused again (a refusal is a function of the state).
              expect(decide(step, state)).toBe(events);
              continue;
            }
            const before = state;
            state = fold(state, events);
            expect(decide(step, state), `${step.command.name} redelivered`).toEqual([]);
            const run = state.current!;
            if (events.some((e) => e.type === 'RolloutHalted' && e.data.reason === 'canary_failed')) canaryFailed = true;
            if (canaryFailed && before.current!.status === 'halted') {
              expect(run.progress.startedWaves, 'no wave starts beyond the canary while halted').toBe(before.current!.progress.startedWaves);
            }
            const rollback = events.find((e) => e.type === 'RolloutRollbackStarted');
            if (rollback) {
              const applied = Object.entries(run.progress.outcomes)
                .filter(([, o]) => o === 'healthy' || o === 'failed')
                .map(([h]) => h);
              expect([...rollback.data.targets].sort()).toEqual(applied.sort());
            }
            if (canaryFailed && run.status !== 'running' && run.progress.startedWaves <= 1) {
              expect(
                run.progress.waves
                  .slice(0, run.progress.startedWaves)
                  .flat()
                  .every((h) => canary.has(h)),
              ).toBe(true);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
