import { CONTROLS_ID, decisionIdOf } from '../../../schemas/autonomy/ids.ts';
import { OpenDecision } from '../../../schemas/autonomy/decisionCommands.ts';
import type { DecisionEvent } from '../../../schemas/autonomy/decisionEvents.ts';
import { planDigestOf } from '../../../schemas/autonomy/plan.ts';
import type { Disposition } from '../../../schemas/autonomy/policies.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { controlsAggregate, type ControlsState } from '../controls/controls.ts';
import { decisionAggregate, isOpen, plusMs, type DecisionState } from './decision.ts';

/** The disposition in force for a new episode, and why it differs from the declared one. */
export function dispositionFor(
  command: Pick<OpenDecision, 'category' | 'policy' | 'plan'>,
  previous: DecisionState,
  controls: ControlsState,
): { disposition: Disposition; reason: string | null } {
  const override = controls.overrides[command.category];
  let disposition = override ?? command.policy.disposition;
  let reason = override ? 'override' : null;
  // Stuck escalation: whatever the policy says, a key whose remediation kept failing asks a human (block stays block).
  if (previous.exists && previous.escalated && disposition !== 'block') {
    disposition = 'require';
    reason = 'escalated';
  }
  // Nothing to run: acting or approving means telling.
  if (command.plan.action === 'none' && (disposition === 'auto' || disposition === 'require')) disposition = 'notify';
  return { disposition, reason };
}

/**
 * `autonomy.openDecision`: a signal for a natural key. One aggregate per key, so a second request for it can never
 * open: while an episode is open a repeat updates a pending request in place (when it says something new) and is
 * otherwise a no-op; after a rejection or timeout nothing opens before the cooldown ends.
 */
export const openDecision = defineCommand({
  name: 'autonomy.openDecision',
  exposure: ['engine'],
  schema: OpenDecision,
  aggregate: decisionAggregate,
  aggregateId: (command) => decisionIdOf(command.category, command.key),
  dependencies: async (_command, load) => ({ controls: await load(controlsAggregate, CONTROLS_ID) }),
  decide(command, state, { now, dependencies }): DecisionEvent[] {
    if (command.policy.category !== command.category) throw new DomainError('NOT_PERMITTED', `category ${command.category} is not declared`);
    if (command.signal.controlPlane) {
      throw new DomainError(
        'NOT_PERMITTED',
        `${command.signal.target.type} ${command.signal.target.id} is part of the control plane: autonomy does not manage itself`,
      );
    }
    const decisionId = decisionIdOf(command.category, command.key);
    const planDigest = planDigestOf(command.plan);
    if (state.exists && isOpen(state)) {
      const changed = state.planDigest !== planDigest || state.signal.detail !== command.signal.detail;
      if (state.status !== 'pending' || !changed) return [];
      return [
        {
          type: 'DecisionUpdated',
          data: { decisionId, episode: state.episode, passId: command.passId, signal: command.signal, plan: command.plan, planDigest },
        },
      ];
    }
    if (state.exists && state.cooldownUntil !== null && Date.parse(state.cooldownUntil) > Date.parse(now)) return [];
    const { disposition, reason } = dispositionFor(command, state, dependencies.controls);
    const episode = state.exists ? state.episode + 1 : 1;
    const expiresAt = disposition === 'require' ? plusMs(now, command.policy.approvalTimeoutMs) : null;
    return [
      {
        type: 'DecisionOpened',
        data: {
          decisionId,
          episode,
          category: command.category,
          key: command.key,
          passId: command.passId,
          signal: command.signal,
          policy: command.policy,
          disposition,
          dispositionReason: reason,
          plan: command.plan,
          planDigest,
          expiresAt,
        },
      },
    ];
  },
});
