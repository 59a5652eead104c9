import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import { recordHostOutcome, recordHostRestored, startWave } from '../../services/fleet/rollout/controllerCommands.ts';
import { abortRollout, pauseRollout, resumeRollout, rollbackRollout } from '../../services/fleet/rollout/operatorCommands.ts';
import { rolloutAggregate, type RolloutState } from '../../services/fleet/rollout/rollout.ts';
import type { CommandDefinition } from '../../services/platform/commands/commandDefinition.ts';
import { DomainError } from '../../schemas/platformError.ts';
import type { Effect } from '../../services/platform/processManager/processManager.ts';
import { RolloutControllerModel, type ControllerInput } from '../../services/processes/rolloutController/controllerModel.ts';
import { decideRolloutReactions, type ModuleApplyTask } from '../../services/processes/rolloutController/rolloutReactions.ts';
import { plainReactions } from '../support/processManagerSpec.ts';
import { observed } from './rolloutControllerSpec.ts';
import { started } from './rolloutLog.ts';

const T0 = Date.parse('2026-12-02T12:00:00.000Z');
const engine = new Map<string, CommandDefinition<string, any, RolloutState, RolloutEvent>>(
  [startWave, recordHostOutcome, recordHostRestored].map((c) => [c.name, c as CommandDefinition<string, any, RolloutState, RolloutEvent>]),
);
const operator = [pauseRollout, resumeRollout, rollbackRollout, abortRollout] as CommandDefinition<string, any, RolloutState, RolloutEvent>[];

/** What happens next on the simulated site: the log delivers, an effect runs, an event is redelivered, a host beats, time passes, an operator acts. */
const op = fc.oneof(
  { arbitrary: fc.constantFrom('deliver', 'run', 'beat'), weight: 12 },
  { arbitrary: fc.constantFrom('redeliver', 'tick'), weight: 3 },
  { arbitrary: fc.constant('operator'), weight: 1 },
);
// Mostly passing probes, so rollouts get past the canary as often as they halt on it.
const step = fc.record({ op, pick: fc.nat(), ok: fc.oneof({ arbitrary: fc.constant(true), weight: 9 }, { arbitrary: fc.constant(false), weight: 1 }) });

/**
 * The controller against the real deciders: its commands are decided on the aggregate (the bus drops an id that
 * already appended), its `module.apply` tasks install the version on the host (the agent runs an id once), and the
 * hosts' heartbeats say what they run. Each input is also decided by a model folded from scratch.
 */
function simulate(hosts: string[], steps: readonly { op: string; pick: number; ok: boolean }[], maxConsecutiveFailures: number) {
  const first = started(hosts, 1, { maxConsecutiveFailures });
  const log: RolloutEvent[] = [first];
  let state = rolloutAggregate.evolve(rolloutAggregate.initialState, first);
  let delivered = 0;
  let now = T0;
  const model = new RolloutControllerModel();
  const history: ControllerInput[] = [];
  const queue: Effect<ModuleApplyTask>[] = [];
  const appended = new Set<string>();
  const ran = new Set<string>();
  const installed = new Map(hosts.map((h) => [h, '1.24.0']));
  const tasks: ModuleApplyTask[] = [];
  const commands: { name: string; payload: { host?: string; wave?: number } }[] = [];
  // The hosts' assignments (`fleet.pinModule` sets one; the bus drops an id it already took), and the applies refused.
  const pins = new Map(hosts.map((h) => [h, '1.24.0']));
  const pinned: string[] = [];
  const refusedApplies: ModuleApplyTask[] = [];

  const append = (events: readonly RolloutEvent[]) => {
    log.push(...events);
    state = events.reduce((s, e) => rolloutAggregate.evolve(s, e), state);
  };
  const decide = (command: CommandDefinition<string, any, RolloutState, RolloutEvent>, payload: unknown): RolloutEvent[] => {
    try {
      return [
        ...command.decide(command.schema.parse(payload), state, { commandId: 'c', actor: 'sim', now: new Date(now).toISOString(), dependencies: undefined }),
      ];
    } catch (err) {
      if (err instanceof DomainError) return [];
      throw err;
    }
  };
  const react = (input: ControllerInput, fold: boolean) => {
    if (fold) {
      model.apply(input);
      history.push(input);
    }
    const reactions = decideRolloutReactions(input, model);
    const scratch = new RolloutControllerModel();
    for (const past of history) scratch.apply(past);
    expect(plainReactions(decideRolloutReactions(input, scratch)), 'a model folded from scratch decides the same').toEqual(plainReactions(reactions));
    for (const r of reactions) queue.push(...r.effects);
  };

  for (const { op, pick, ok } of steps) {
    if (op === 'deliver' && delivered < log.length) react({ type: 'event', event: log[delivered++]! }, true);
    else if (op === 'redeliver' && delivered > 0) react({ type: 'event', event: log[pick % delivered]! }, false);
    else if (op === 'beat') {
      const host = hosts[pick % hosts.length]!;
      react(observed(host, installed.get(host)!, now, ok ? {} : { state: 'failed', probes: [{ name: 'http', ok: false }] }), true);
    } else if (op === 'tick') {
      now += pick % 20_000;
      react({ type: 'tick', now }, true);
    } else if (op === 'operator') append(decide(operator[pick % operator.length]!, { rolloutId: 'nginx-1' }));
    else if (op === 'run' && queue.length > 0) {
      const effect = queue.shift()!;
      if (effect.kind === 'task') {
        tasks.push(effect.task);
        // A host refuses an apply now and then (a bundle that does not match its digest): it keeps what it runs and
        // answers with a signed refusal, which the controller hears (each time it resends, the agent answers the same).
        const refuses = !ok && !ran.has(effect.task.commandId) ? pick % 2 === 0 : refusedApplies.some((t) => t.commandId === effect.task.commandId);
        if (refuses) {
          if (!ran.has(effect.task.commandId)) refusedApplies.push(effect.task);
          const { commandId, rolloutId, host, module, version } = effect.task;
          react({ type: 'refused', refusal: { kind: 'apply-refused', commandId, rolloutId, host, module, version, reason: 'BUNDLE_DIGEST' } }, true);
        } else if (!ran.has(effect.task.commandId)) installed.set(effect.task.host, effect.task.version);
        ran.add(effect.task.commandId);
      } else if (effect.kind === 'command' && effect.name === 'fleet.pinModule') {
        if (!appended.has(effect.commandId)) {
          const { nodeId, version } = effect.payload as { nodeId: string; version: string };
          pins.set(nodeId, version);
          pinned.push(nodeId);
        }
        appended.add(effect.commandId);
      } else if (effect.kind === 'command' && !appended.has(effect.commandId)) {
        commands.push({ name: effect.name, payload: effect.payload as { host?: string } });
        const events = decide(engine.get(effect.name)!, effect.payload);
        if (events.length > 0) appended.add(effect.commandId);
        append(events);
      }
    }
  }
  // The site settles: every event delivered (some twice), every effect run, until nothing is left to do.
  while (delivered < log.length || queue.length > 0) {
    if (delivered < log.length) {
      const event = log[delivered++]!;
      react({ type: 'event', event }, true);
      react({ type: 'event', event }, false);
    }
    while (queue.length > 0) {
      const effect = queue.shift()!;
      if (effect.kind === 'command' && effect.name === 'fleet.pinModule') {
        if (!appended.has(effect.commandId)) {
          const { nodeId, version } = effect.payload as { nodeId: string; version: string };
          pins.set(nodeId, version);
          pinned.push(nodeId);
        }
        appended.add(effect.commandId);
      } else if (effect.kind === 'command' && !appended.has(effect.commandId)) {
        const events = decide(engine.get(effect.name)!, effect.payload);
        if (events.length > 0) appended.add(effect.commandId);
        append(events);
      }
    }
  }
  return { state, tasks, commands, pins, pinned, installed, refusedApplies };
}

describe('rollout controller (properties)', () => {
  it('over random reports, redeliveries and ticks: one module.apply id per host and wave, nothing beyond a failed canary, the same reactions from scratch', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(step, { minLength: 1, maxLength: 300, size: 'large' }),
        (count, maxConsecutiveFailures, steps) => {
          const hosts = Array.from({ length: count }, (_, i) => `h${i}`);
          const { state, tasks, commands } = simulate(hosts, steps, maxConsecutiveFailures);
          const run = state.current!;
          const ids = new Map<string, Set<string>>();
          for (const t of tasks) ids.set(`${t.host}@${t.version}`, (ids.get(`${t.host}@${t.version}`) ?? new Set()).add(t.commandId));
          for (const [key, set] of ids) expect(set.size, `module.apply ids for ${key}`).toBe(1);
          const canary = run.progress.waves[0]!;
          const canaryOutcomes = canary.map((h) => run.progress.outcomes[h]);
          if (canaryOutcomes.some((o) => o === 'failed' || o === 'timed-out')) {
            for (const t of tasks) expect(canary, `${t.version} applied to ${t.host}`).toContain(t.host);
            for (const c of commands) if (c.payload.host !== undefined) expect(canary).toContain(c.payload.host);
            expect(commands.filter((c) => c.name === 'fleet.startWave' && c.payload.wave !== 0)).toEqual([]);
          }
          // Absence is never healthy: a host recorded healthy was sent the new version and ran it.
          for (const [host, outcome] of Object.entries(run.progress.outcomes)) {
            if (outcome === 'healthy') expect(tasks.some((t) => t.host === host && t.version === run.toVersion)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a rollout that ends pins each host it left on a known version to that version, once; the others keep their pin', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(step, { minLength: 1, maxLength: 300, size: 'large' }),
        (count, maxConsecutiveFailures, steps) => {
          const hosts = Array.from({ length: count }, (_, i) => `h${i}`);
          const { state, pins, pinned, installed, refusedApplies } = simulate(hosts, steps, maxConsecutiveFailures);
          const run = state.current!;
          // A refused apply never reads healthy: the host did not run what it refused.
          for (const t of refusedApplies) if (t.version === run.toVersion) expect(run.progress.outcomes[t.host]).not.toBe('healthy');
          const targets = run.rollback?.targets ?? [];
          const expected = new Map(hosts.map((h) => [h, '1.24.0']));
          if (['completed', 'aborted', 'rolled-back'].includes(run.status)) {
            for (const [host, outcome] of Object.entries(run.progress.outcomes))
              if (outcome === 'healthy' && !targets.includes(host)) expected.set(host, run.toVersion);
            for (const host of targets) if (run.rollback?.restored[host] === 'healthy') expected.set(host, run.fromVersion);
          }
          expect(pins).toEqual(expected);
          expect(new Set(pinned).size, 'one pin per host, however often the end is delivered').toBe(pinned.length);
          // A pin says what the host runs.
          for (const host of pinned) expect(pins.get(host)).toBe(installed.get(host));
        },
      ),
      { numRuns: 200 },
    );
  });
});
