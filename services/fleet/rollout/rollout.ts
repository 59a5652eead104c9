import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import type { RolloutOptions } from '../../../schemas/fleet/rolloutCommands.ts';
import { rolloutEvents, type RolloutEvent } from '../../../schemas/fleet/rolloutEvents.ts';
import { endedRolloutStatuses, type RolloutStatus } from '../../../schemas/fleet/rolloutViews.ts';
import type { HostOutcome } from '../../../schemas/fleet/rolloutWaves.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';
import { evolveProgress, initialProgress, type RolloutProgress } from './progress.ts';

/** One rollout of a module, as its deciders read it. */
export interface RolloutRun {
  readonly rolloutId: string;
  readonly module: string;
  readonly fromVersion: string;
  readonly toVersion: string;
  readonly template: string | null;
  readonly options: RolloutOptions;
  readonly planDigest: string;
  /** Approvals its start needed (the quorum's threshold then; 0: it ran at once) and who approved so far. */
  readonly approvalsRequired: number;
  readonly approvals: readonly string[];
  /** When its approval window closes (ISO-8601; null when it needed no approval). */
  readonly approvalExpiresAt: string | null;
  /** The approver whose signed rejection ended it; null unless `rejected`. */
  readonly rejectedBy: string | null;
  readonly status: RolloutStatus;
  readonly progress: RolloutProgress;
  /** Set by a rollback: its targets and each one's first report of the previous version. */
  readonly rollback: { readonly targets: readonly string[]; readonly restored: Readonly<Record<string, HostOutcome>> } | null;
}

/**
 * A module's rollouts (`bc.evt.fleet.rollout.<module>`): how many it has had, and the last one. One aggregate per
 * module is what makes "one rollout at a time" a decision on one state, not a race between two.
 */
export interface RolloutState {
  readonly count: number;
  readonly current: RolloutRun | null;
}

export const isRolloutActive = (run: RolloutRun | null): run is RolloutRun => run !== null && !endedRolloutStatuses.has(run.status);

const withRun = (state: RolloutState, change: (run: RolloutRun) => RolloutRun): RolloutState =>
  state.current === null ? state : { ...state, current: change(state.current) };

export const rolloutAggregate = defineAggregate<RolloutState, RolloutEvent>({
  module: 'fleet',
  type: 'rollout',
  initialState: { count: 0, current: null },
  catalog: new EventCatalog(rolloutEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'RolloutStarted': {
        const { waves, options, ...rest } = event.data;
        const status = rest.approvalsRequired > 0 ? 'awaiting-approval' : 'running';
        const run: RolloutRun = { ...rest, options, approvals: [], rejectedBy: null, status, progress: initialProgress(waves), rollback: null };
        return { count: state.count + 1, current: run };
      }
      case 'RolloutApprovalRecorded':
        return withRun(state, (run) => ({ ...run, approvals: [...run.approvals, event.data.approverId] }));
      case 'RolloutApproved':
        return withRun(state, (run) => ({ ...run, status: 'running' }));
      case 'RolloutRejected':
        return withRun(state, (run) => ({ ...run, status: 'rejected', rejectedBy: event.data.approverId }));
      case 'RolloutApprovalExpired':
        return withRun(state, (run) => ({ ...run, status: 'approval-expired' }));
      case 'RolloutWaveStarted':
        return withRun(state, (run) => ({ ...run, progress: evolveProgress(run.progress, { type: 'WaveStarted', wave: event.data.wave }, run.options) }));
      case 'RolloutHostReported':
        return withRun(state, (run) => ({
          ...run,
          progress: evolveProgress(run.progress, { type: 'HostReported', host: event.data.host, outcome: event.data.outcome }, run.options),
        }));
      case 'RolloutContinued':
        return withRun(state, (run) => ({ ...run, status: 'running', progress: evolveProgress(run.progress, { type: 'Continued' }, run.options) }));
      case 'RolloutRollbackStarted':
        return withRun(state, (run) => ({ ...run, status: 'rolling-back', rollback: { targets: event.data.targets, restored: {} } }));
      case 'RolloutHostRestored':
        return withRun(state, (run) =>
          run.rollback === null
            ? run
            : { ...run, rollback: { ...run.rollback, restored: { ...run.rollback.restored, [event.data.host]: event.data.outcome } } },
        );
      case 'RolloutHalted':
        return withRun(state, (run) => ({ ...run, status: 'halted' }));
      case 'RolloutPaused':
        return withRun(state, (run) => ({ ...run, status: 'paused' }));
      case 'RolloutResumed':
        return withRun(state, (run) => ({ ...run, status: 'running' }));
      case 'RolloutRolledBack':
        return withRun(state, (run) => ({ ...run, status: 'rolled-back' }));
      case 'RolloutAborted':
        return withRun(state, (run) => ({ ...run, status: 'aborted' }));
      case 'RolloutCompleted':
        return withRun(state, (run) => ({ ...run, status: 'completed' }));
    }
  },
});
