import type { HostModuleObservation } from '../../../schemas/agent/hostModuleObservation.ts';
import type { ApplyRefusal } from './applyResults.ts';
import type { AssignmentEvent } from '../../../schemas/fleet/assignmentEvents.ts';
import type { ModuleEvent } from '../../../schemas/fleet/modules.ts';
import { moduleOfRollout } from '../../../schemas/fleet/rolloutCommands.ts';
import type { RolloutEvent } from '../../../schemas/fleet/rolloutEvents.ts';
import { endedRolloutStatuses } from '../../../schemas/fleet/rolloutViews.ts';
import { isRolloutActive, rolloutAggregate, type RolloutRun, type RolloutState } from '../../fleet/rollout/rollout.ts';

/**
 * What the rollout controller folds: the log's rollout, module and assignment events (a plan's apply request is decided
 * on, never folded), heartbeat observations, the verified results
 * of applies its hosts refused, clock ticks.
 */
export type ControllerInput =
  | { readonly type: 'event'; readonly event: RolloutEvent | ModuleEvent | AssignmentEvent }
  | { readonly type: 'observed'; readonly observation: HostModuleObservation }
  | { readonly type: 'refused'; readonly refusal: ApplyRefusal }
  | { readonly type: 'tick'; readonly now: number };

/** A module's rollouts as the aggregate folds them, plus the times the aggregate does not keep. */
export interface ControlledRollouts {
  state: RolloutState;
  /** Per started wave of the current rollout: when it started and its deadline (ms, the control plane's clock). */
  waves: { readonly startedAt: number; readonly deadline: number }[];
  /** When the current rollout's rollback started as the controller's clock saw it; null until a tick after it. */
  rollbackSince: number | null;
}

/**
 * The rollout controller's model. The rollouts are folded with the aggregate's own `evolve`, so the controller reads
 * exactly the state its commands will be decided on. Changed in place, like the orchestrator's `FleetModel`.
 */
export class RolloutControllerModel {
  readonly rollouts = new Map<string, ControlledRollouts>();
  /** `manifestSha256` of each published `<module>@<version>`: a report of another digest is not that version. */
  readonly manifests = new Map<string, string>();
  /** The probes each published `<module>@<version>` declares, by name: a report is judged once it carries them all. */
  readonly probes = new Map<string, readonly string[]>();
  /** Each host module's latest observation (by `at`). */
  readonly observations = new Map<string, HostModuleObservation>();
  /**
   * The `module.apply` commands (by id) whose host answered with a verified result that it did not apply them. An id
   * names one rollout, wave and host (`rolloutReactions.ts`), so the refusal is that host's outcome and no other's.
   */
  readonly refused = new Set<string>();
  /** The latest tick; null before the first one. */
  now: number | null = null;

  apply(input: ControllerInput): void {
    if (input.type === 'tick') return this.#tick(input.now);
    if (input.type === 'observed') return this.#observe(input.observation);
    if (input.type === 'refused') return void this.refused.add(input.refusal.commandId);
    const { event } = input;
    if (event.type === 'HostPlanAssigned' || event.type === 'HostPlanApplyRequested') return;
    if (event.type === 'ModuleVersionPublished') {
      this.manifests.set(`${event.data.module}@${event.data.version}`, event.data.manifestSha256);
      this.probes.set(
        `${event.data.module}@${event.data.version}`,
        event.data.manifest.probes.map((p) => p.name),
      );
      return;
    }
    const module = moduleOfRollout(event.data.rolloutId);
    const entry = this.rollouts.get(module) ?? { state: rolloutAggregate.initialState, waves: [], rollbackSince: null };
    const before = entry.state.current;
    entry.state = rolloutAggregate.evolve(entry.state, event);
    if (event.type === 'RolloutStarted') Object.assign(entry, { waves: [], rollbackSince: null });
    const run = entry.state.current;
    if (event.type === 'RolloutWaveStarted' && run !== null && run.progress.startedWaves > (before?.progress.startedWaves ?? 0)) {
      const deadline = Date.parse(event.data.deadline);
      entry.waves.push({ startedAt: deadline - run.options.waveTimeoutMs, deadline });
    }
    if (event.type === 'RolloutRollbackStarted') entry.rollbackSince = this.now;
    this.rollouts.set(module, entry);
  }

  /** The rollout `rolloutId` when it is the current one of its module and has not ended. */
  activeRun(rolloutId: string): RolloutRun | undefined {
    const run = this.rollouts.get(moduleOfRollout(rolloutId))?.state.current ?? null;
    return isRolloutActive(run) && run.rolloutId === rolloutId ? run : undefined;
  }

  /** The rollout `rolloutId` when it is the current one of its module and has ended. */
  endedRun(rolloutId: string): RolloutRun | undefined {
    const run = this.rollouts.get(moduleOfRollout(rolloutId))?.state.current ?? null;
    return run !== null && endedRolloutStatuses.has(run.status) && run.rolloutId === rolloutId ? run : undefined;
  }

  observation(host: string, module: string): HostModuleObservation | undefined {
    return this.observations.get(`${host}/${module}`);
  }

  #tick(now: number): void {
    this.now = Math.max(this.now ?? now, now);
    for (const entry of this.rollouts.values())
      if (entry.state.current?.status === 'rolling-back' && entry.rollbackSince === null) entry.rollbackSince = this.now;
  }

  #observe(observation: HostModuleObservation): void {
    const key = `${observation.host}/${observation.module}`;
    const seen = this.observations.get(key);
    if (seen === undefined || seen.at <= observation.at) this.observations.set(key, observation);
  }
}
