import { ExpireDecision, RecordOutcome, RecordStarted, RequireApproval } from '../../../schemas/autonomy/decisionCommands.ts';
import type { DecisionEvent } from '../../../schemas/autonomy/decisionEvents.ts';
import { cooldownMsOf } from '../../../schemas/autonomy/policies.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { decisionAggregate, ESCALATE_AFTER, plusMs, type DecisionState, type ExistingDecision } from './decision.ts';

/** The episode a command names, or undefined when the decision has moved on (a late or repeated engine command). */
function episodeOf(state: DecisionState, decisionId: string, episode: number): ExistingDecision | undefined {
  if (!state.exists) throw new DomainError('NOT_FOUND', `decision ${decisionId} does not exist`);
  return state.episode === episode ? state : undefined;
}

/** `autonomy.expire` (the sweep before each pass): a pending request past its expiry is rejected and cools down. */
export const expireDecision = defineCommand({
  name: 'autonomy.expire',
  exposure: ['engine'],
  schema: ExpireDecision,
  aggregate: decisionAggregate,
  aggregateId: (command) => command.decisionId,
  decide(command, state, { now }): DecisionEvent[] {
    const d = episodeOf(state, command.decisionId, command.episode);
    if (!d || d.status !== 'pending' || d.expiresAt === null || Date.parse(d.expiresAt) > Date.parse(now)) return [];
    return [
      {
        type: 'DecisionRejected',
        data: { decisionId: d.decisionId, episode: d.episode, reason: 'expired', by: null, note: null, cooldownUntil: plusMs(now, cooldownMsOf(d.policy)) },
      },
    ];
  },
});

/** `autonomy.requireApproval`: the budget did not admit an `auto` decision, so it fails closed into a request. */
export const requireApproval = defineCommand({
  name: 'autonomy.requireApproval',
  exposure: ['engine'],
  schema: RequireApproval,
  aggregate: decisionAggregate,
  aggregateId: (command) => command.decisionId,
  decide(command, state, { now }): DecisionEvent[] {
    const d = episodeOf(state, command.decisionId, command.episode);
    if (!d || d.status !== 'approved' || d.approvedBy !== 'policy') return [];
    return [
      {
        type: 'DecisionApprovalRequired',
        data: { decisionId: d.decisionId, episode: d.episode, reason: command.reason, expiresAt: plusMs(now, d.policy.approvalTimeoutMs) },
      },
    ];
  },
});

/** `autonomy.recordStarted`: the approved remediation was accepted; the outcome is judged after `settleMs`. */
export const recordStarted = defineCommand({
  name: 'autonomy.recordStarted',
  exposure: ['engine'],
  schema: RecordStarted,
  aggregate: decisionAggregate,
  aggregateId: (command) => command.decisionId,
  decide(command, state, { now }): DecisionEvent[] {
    const d = episodeOf(state, command.decisionId, command.episode);
    if (!d || d.status !== 'approved') return [];
    const { decisionId, episode, commandName, commandId } = command;
    return [{ type: 'DecisionRemediationStarted', data: { decisionId, episode, commandName, commandId, settleUntil: plusMs(now, command.settleMs) } }];
  },
});

/**
 * `autonomy.recordOutcome`: what a pass said about the key. A running remediation is judged once its settle window
 * is over: effective only when the signal is absent AND its sensor reported ok (a crashed sensor proves nothing, so
 * nothing is concluded). Ineffective outcomes in a row escalate at `ESCALATE_AFTER`. A notify or block episode ends
 * when its signal is gone.
 */
export const recordOutcome = defineCommand({
  name: 'autonomy.recordOutcome',
  exposure: ['engine'],
  schema: RecordOutcome,
  aggregate: decisionAggregate,
  aggregateId: (command) => command.decisionId,
  decide(command, state, { now }): DecisionEvent[] {
    const d = episodeOf(state, command.decisionId, command.episode);
    if (!d) return [];
    const ref = { decisionId: d.decisionId, episode: d.episode, passId: command.passId };
    if (d.status === 'notified' || d.status === 'blocked') {
      return !command.signalPresent && command.sensorOk ? [{ type: 'DecisionResolved', data: ref }] : [];
    }
    if (d.status !== 'running' || d.settleUntil === null || Date.parse(d.settleUntil) > Date.parse(now)) return [];
    if (!command.sensorOk) return [];
    const effective = !command.signalPresent;
    const ineffectiveStreak = effective ? 0 : d.ineffectiveStreak + 1;
    const escalated = ineffectiveStreak >= ESCALATE_AFTER;
    return [
      {
        type: 'DecisionOutcomeRecorded',
        data: { ...ref, effective, signalPresent: command.signalPresent, sensorOk: command.sensorOk, ineffectiveStreak, escalated },
      },
    ];
  },
});
