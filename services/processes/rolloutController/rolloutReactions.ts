import type { HostModuleObservation } from '../../../schemas/agent/hostModuleObservation.ts';
import { moduleReportVerdict } from '../../../schemas/agent/hostModules.ts';
import type { HostOutcome } from '../../../schemas/fleet/rolloutWaves.ts';
import { idFor } from '../../../schemas/ids.ts';
import { decideProgress, outcomeOf } from '../../fleet/rollout/progress.ts';
import { waveOf } from '../../fleet/rollout/waves.ts';
import type { RolloutRun } from '../../fleet/rollout/rollout.ts';
import type { Effect, EngineCommand, Reaction } from '../../platform/processManager/processManager.ts';
import type { ApplyRefusal } from './applyResults.ts';
import type { ControllerInput, RolloutControllerModel } from './controllerModel.ts';
import { pinsOfEndedRollout } from './rolloutPins.ts';

/**
 * `module.apply` of `version` to `host`, for the controller's `perform` to sign and publish as an agent command (the
 * bundle, digests and trusted publishers come from the module's published version). `commandId` is the agent command's
 * id: derived from the rollout, wave and host, so a redelivery publishes the same command and the agent runs it once.
 */
export interface ModuleApplyTask {
  readonly type: 'module.apply';
  readonly commandId: string;
  readonly rolloutId: string;
  readonly host: string;
  readonly module: string;
  readonly version: string;
}

type ControllerEffect = Effect<ModuleApplyTask>;

const command = (name: string, payload: unknown, commandId: string): EngineCommand<ModuleApplyTask> => ({ kind: 'command', name, payload, commandId });

/** The events that end a rollout: its hosts are pinned to what they run then (`rolloutPins.ts`). */
const ending = new Set(['RolloutCompleted', 'RolloutAborted', 'RolloutRolledBack']);

/** States whose started hosts' reports and timeouts still count (`fleet.recordHostOutcome` accepts them). */
const recording = new Set(['running', 'paused', 'halted']);

/**
 * What the rollout controller does about an input, as data, keyed by rollout so one rollout's effects stay in order.
 * Edge-triggered: a wave is asked for when an event may have made it next (a start, an approval, a report), a wave's hosts get `module.apply` when
 * it starts (again on resume or continue, same ids), a host's outcome is recorded when its heartbeat shows the new
 * version; a tick records what the deadlines say (and ends a rollout whose approval window closed). Every id derives from what it answers, so a redelivered input
 * sends the same commands again and the bus (or the agent's journal) drops them. A rollout's end pins its hosts.
 */
export function decideRolloutReactions(input: ControllerInput, model: RolloutControllerModel): Reaction<ModuleApplyTask>[] {
  if (input.type === 'tick') return [...model.rollouts.values()].flatMap(({ state }) => resync(state.current, model));
  if (input.type === 'observed') return observed(input.observation, model);
  if (input.type === 'refused') return refused(input.refusal, model);
  const { event } = input;
  // A plan's apply request is no rollout's: `decidePlanApply` answers it (`rolloutControl.ts`).
  if (event.type === 'ModuleVersionPublished' || event.type === 'HostPlanAssigned' || event.type === 'HostPlanApplyRequested') return [];
  if (ending.has(event.type)) {
    const ended = model.endedRun(event.data.rolloutId);
    return ended === undefined ? [] : reaction(ended, pinsOfEndedRollout(ended));
  }
  const run = model.activeRun(event.data.rolloutId);
  if (run === undefined) return [];
  switch (event.type) {
    // Under an approver quorum the canary waits for the approval, not the start.
    case 'RolloutStarted':
    case 'RolloutApproved':
    case 'RolloutHostReported':
      return reaction(run, nextWave(run));
    case 'RolloutWaveStarted':
      return reaction(run, run.status === 'running' ? applies(run, run.progress.waves[event.data.wave] ?? []) : []);
    case 'RolloutResumed':
    case 'RolloutContinued':
      return reaction(run, run.status === 'running' ? [...applies(run, unreported(run)), ...nextWave(run)] : []);
    case 'RolloutRollbackStarted':
      return reaction(run, run.rollback === null ? [] : run.rollback.targets.filter((h) => !restored(run, h)).map((h) => restore(run, h)));
    default:
      return [];
  }
}

const reaction = (run: RolloutRun, effects: readonly ControllerEffect[], coalesce = false): Reaction<ModuleApplyTask>[] =>
  effects.length === 0 ? [] : [{ key: run.rolloutId, effects, ...(coalesce ? { coalesce } : {}) }];

/** `fleet.startWave` when the folded state says the next wave may start (never while paused, halted or ended). */
function nextWave(run: RolloutRun): ControllerEffect[] {
  if (run.status !== 'running') return [];
  const next = decideProgress(run.progress);
  if (next.action !== 'start_wave') return [];
  const { rolloutId } = run;
  return [command('fleet.startWave', { rolloutId, wave: next.wave }, idFor('rollout-wave', `${rolloutId}/${next.wave}`))];
}

/** Hosts of the started waves without an outcome. */
const unreported = (run: RolloutRun): string[] =>
  run.progress.waves
    .slice(0, run.progress.startedWaves)
    .flat()
    .filter((host) => outcomeOf(run.progress.outcomes, host) === undefined);

const restored = (run: RolloutRun, host: string): boolean => run.rollback !== null && outcomeOf(run.rollback.restored, host) !== undefined;

function applies(run: RolloutRun, hosts: readonly string[]): ControllerEffect[] {
  return hosts.filter((host) => outcomeOf(run.progress.outcomes, host) === undefined).map((host) => applyOf(run, host, run.toVersion, applyId(run, host)));
}

/** The id of the `module.apply` of the new version to `host`: one per rollout, wave and host. */
const applyId = (run: RolloutRun, host: string): string => idFor('rollout-apply', `${run.rolloutId}/${waveOf(run.progress.waves, host)}/${host}`);
/** The id of the `module.apply` of the previous version to `host` in the rollout's rollback. */
const restoreId = (run: RolloutRun, host: string): string => idFor('rollout-restore', `${run.rolloutId}/${host}`);

const restore = (run: RolloutRun, host: string): ControllerEffect => applyOf(run, host, run.fromVersion, restoreId(run, host));

function applyOf(run: RolloutRun, host: string, version: string, commandId: string): ControllerEffect {
  return { kind: 'task', task: { type: 'module.apply', commandId, rolloutId: run.rolloutId, host, module: run.module, version } };
}

/** Whether `observation` reports `version` applied, and how it went; undefined while it does not (yet). */
function reportedOutcome(
  model: RolloutControllerModel,
  observation: HostModuleObservation | undefined,
  version: string,
  since: number | null,
): HostOutcome | undefined {
  if (observation === undefined || observation.version !== version) return undefined;
  if (since !== null && observation.at < since) return undefined;
  const key = `${observation.module}@${version}`;
  return moduleReportVerdict(observation, model.probes.get(key) ?? [], model.manifests.get(key));
}

/**
 * The outcome of a started host: failed when it refused its apply (a verified result), else its report of the new
 * version since its wave started, else timed-out past the deadline.
 */
function hostOutcome(run: RolloutRun, host: string, model: RolloutControllerModel, deadlines: boolean): HostOutcome | undefined {
  const times = model.rollouts.get(run.module)?.waves[waveOf(run.progress.waves, host)];
  if (times === undefined) return undefined;
  if (model.refused.has(applyId(run, host))) return 'failed';
  const reported = reportedOutcome(model, model.observation(host, run.module), run.toVersion, times.startedAt);
  if (reported !== undefined) return reported;
  return deadlines && model.now !== null && model.now > times.deadline ? 'timed-out' : undefined;
}

function restoredOutcome(run: RolloutRun, host: string, model: RolloutControllerModel, deadlines: boolean): HostOutcome | undefined {
  if (model.refused.has(restoreId(run, host))) return 'failed';
  const since = model.rollouts.get(run.module)?.rollbackSince ?? null;
  const reported = reportedOutcome(model, model.observation(host, run.module), run.fromVersion, since);
  if (reported !== undefined) return reported;
  return deadlines && since !== null && model.now !== null && model.now > since + run.options.waveTimeoutMs ? 'timed-out' : undefined;
}

function recordOutcome(run: RolloutRun, host: string, outcome: HostOutcome): ControllerEffect {
  const { rolloutId } = run;
  return command('fleet.recordHostOutcome', { rolloutId, host, outcome }, idFor('rollout-outcome', `${rolloutId}/${host}`));
}

function recordRestored(run: RolloutRun, host: string, outcome: HostOutcome): ControllerEffect {
  const { rolloutId } = run;
  return command('fleet.recordHostRestored', { rolloutId, host, outcome }, idFor('rollout-restored', `${rolloutId}/${host}`));
}

/** The outcomes the model can tell now of `hosts`: their reports, and (when `deadlines`) whatever deadline has passed. */
function outcomes(run: RolloutRun, model: RolloutControllerModel, hosts: readonly string[], deadlines: boolean): ControllerEffect[] {
  if (run.status === 'rolling-back' && run.rollback !== null) {
    return run.rollback.targets
      .filter((h) => hosts.includes(h) && !restored(run, h))
      .flatMap((h) => {
        const outcome = restoredOutcome(run, h, model, deadlines);
        return outcome === undefined ? [] : [recordRestored(run, h, outcome)];
      });
  }
  if (!recording.has(run.status)) return [];
  return unreported(run)
    .filter((h) => hosts.includes(h))
    .flatMap((h) => {
      const outcome = hostOutcome(run, h, model, deadlines);
      return outcome === undefined ? [] : [recordOutcome(run, h, outcome)];
    });
}

function observed(observation: HostModuleObservation, model: RolloutControllerModel): Reaction<ModuleApplyTask>[] {
  const run = model.rollouts.get(observation.module)?.state.current;
  if (run === undefined || run === null) return [];
  const active = model.activeRun(run.rolloutId);
  if (active === undefined) return [];
  // Only a report outcome here: a deadline is read on ticks, so one heartbeat never times out another host.
  return reaction(active, outcomes(active, model, [observation.host], false));
}

/** A host's refused apply: its outcome (or its restore's) is recorded failed now, and the breaker counts it. */
function refused(refusal: ApplyRefusal, model: RolloutControllerModel): Reaction<ModuleApplyTask>[] {
  const active = model.activeRun(refusal.rolloutId);
  return active === undefined ? [] : reaction(active, outcomes(active, model, [refusal.host], false));
}

function resync(run: RolloutRun | null, model: RolloutControllerModel): Reaction<ModuleApplyTask>[] {
  if (run === null) return [];
  const active = model.activeRun(run.rolloutId);
  if (active === undefined) return [];
  return reaction(active, [...approvalExpiry(active, model), ...outcomes(active, model, active.progress.waves.flat(), true)], true);
}

/**
 * `fleet.expireRolloutApproval` once the clock is past a waiting rollout's approval window. Its id is the rollout's: a
 * repeat is a duplicate, and one refused because the decider's clock was behind is asked again on the next tick.
 */
function approvalExpiry(run: RolloutRun, model: RolloutControllerModel): ControllerEffect[] {
  if (run.status !== 'awaiting-approval' || run.approvalExpiresAt === null || model.now === null) return [];
  if (model.now < Date.parse(run.approvalExpiresAt)) return [];
  const { rolloutId } = run;
  return [command('fleet.expireRolloutApproval', { rolloutId }, idFor('rollout-approval-expiry', rolloutId))];
}
