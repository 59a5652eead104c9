import type { AssignmentState } from '../../../schemas/fleet/assignmentState.ts';
import { StartRollout } from '../../../schemas/fleet/rolloutCommands.ts';
import type { RolloutEvent } from '../../../schemas/fleet/rolloutEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { currentQuorum, type ApproversState } from '../../../schemas/trust/approversState.ts';
import { DomainError, type Issue } from '../../../schemas/platformError.ts';
import { assignmentAggregate } from '../assignment/assignment.ts';
import { moduleAggregate } from '../module/module.ts';
import { isRolloutActive, rolloutAggregate } from './rollout.ts';
import { nextRolloutId, planRollout } from './rolloutPlan.ts';

/** What a start reads of the log: the module's published versions, each named host's assignment, the approver quorum. */
interface StartRolloutInputs {
  publishedVersions: readonly string[];
  assignments: Readonly<Record<string, AssignmentState>>;
  quorum: ApproversState;
}

/** Why a host may not be in the rollout, or null: its plan must pin the module at the version the rollout moves from. */
function hostIssue(host: string, assignment: AssignmentState | undefined, command: StartRollout): Issue | null {
  if (assignment === undefined || !assignment.exists) return { path: host, message: 'has no assignment' };
  const pinned = Object.hasOwn(assignment.plan, command.module) ? assignment.plan[command.module] : undefined;
  if (pinned !== command.fromVersion) return { path: host, message: `its plan pins ${command.module} at ${pinned ?? '(none)'}, not ${command.fromVersion}` };
  if (command.template !== undefined && assignment.template !== command.template) {
    return { path: host, message: `is assigned template ${assignment.template ?? '(none)'}, not ${command.template}` };
  }
  return null;
}

/**
 * `fleet.startRollout`: plans the waves and records the rollout; no host is touched until the controller starts the
 * canary (`fleet.startWave`). Under an approver quorum (`pki.setApprovers`) the rollout is a `require` decision: it
 * awaits the quorum's threshold of signed approvals of its plan digest (`fleet.approveRollout`) before any wave may
 * start, within its approval window (the quorum's `approvalTtlSeconds`: past it the rollout ends `approval-expired`,
 * `fleet.expireRolloutApproval`), unless an approver rejects it first (`fleet.rejectRollout`). Without one, as a
 * destructive workflow's batch, there is nobody to ask and the operator's start approves it.
 * The same plan sent again while it runs (or awaits approval) appends nothing; another plan of the module is refused
 * (ROLLOUT_IN_PROGRESS) until the current one ends.
 */
export const startRollout = defineCommand({
  name: 'fleet.startRollout',
  exposure: ['operator'],
  schema: StartRollout,
  aggregate: rolloutAggregate,
  aggregateId: (command) => command.module,
  async dependencies(command, load): Promise<StartRolloutInputs> {
    const hosts = [...new Set(command.hosts)];
    const [quorum, [module, ...assignments]] = await Promise.all([
      currentQuorum(load),
      Promise.all([load(moduleAggregate, command.module, { fresh: true }), ...hosts.map((host) => load(assignmentAggregate, host, { fresh: true }))]),
    ]);
    return {
      publishedVersions: module.versions.map((v) => v.version),
      assignments: Object.fromEntries(hosts.map((host, i) => [host, assignments[i]!])),
      quorum,
    };
  },
  decide(command, state, { dependencies, now }): RolloutEvent[] {
    const plan = planRollout(command);
    if (isRolloutActive(state.current)) {
      if (state.current.planDigest === plan.planDigest && state.current.template === (command.template ?? null)) return [];
      throw new DomainError(
        'ROLLOUT_IN_PROGRESS',
        `rollout ${state.current.rolloutId} of ${command.module} is ${state.current.status}: continue, roll back or abort it first`,
      );
    }
    if (command.planDigest !== undefined && command.planDigest !== plan.planDigest) {
      throw new DomainError('PLAN_DIGEST_MISMATCH', `the plan's digest is ${plan.planDigest}, not the approved ${command.planDigest}`);
    }
    if (!dependencies.publishedVersions.includes(command.toVersion)) {
      throw new DomainError('PRECONDITION_FAILED', `${command.module} ${command.toVersion} is not published`);
    }
    const issues = [...new Set(command.hosts)].flatMap((host) => hostIssue(host, dependencies.assignments[host], command) ?? []);
    if (issues.length > 0) {
      throw new DomainError('PRECONDITION_FAILED', `${issues.length} host(s) do not run ${command.module} ${command.fromVersion}`, { issues });
    }
    const { canarySize, wavePercent, maxConsecutiveFailures, waveTimeoutMs } = command;
    return [
      {
        type: 'RolloutStarted',
        data: {
          rolloutId: nextRolloutId(command.module, state),
          module: command.module,
          fromVersion: command.fromVersion,
          toVersion: command.toVersion,
          template: command.template ?? null,
          waves: plan.waves,
          options: { canarySize, wavePercent, maxConsecutiveFailures, waveTimeoutMs },
          planDigest: plan.planDigest,
          approvalsRequired: dependencies.quorum.threshold,
          approvalExpiresAt:
            dependencies.quorum.threshold > 0 ? new Date(Date.parse(now) + dependencies.quorum.approvalTtlSeconds * 1_000).toISOString() : null,
        },
      },
    ];
  },
});
