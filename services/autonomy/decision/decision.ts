import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { decisionEvents, type DecisionEvent } from '../../../schemas/autonomy/decisionEvents.ts';
import type { RemediationPlan } from '../../../schemas/autonomy/plan.ts';
import type { Disposition, PolicyDeclaration } from '../../../schemas/autonomy/policies.ts';
import { cooldownMsOf } from '../../../schemas/autonomy/policies.ts';
import type { Signal } from '../../../schemas/autonomy/signals.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/**
 * Where an episode is: `pending` waits for approvers, `approved` may start (by policy it first takes budget),
 * `running` was started and settles, `notified` / `blocked` wait for their signal to go, `closed` is over.
 */
export type DecisionStatus = 'pending' | 'approved' | 'running' | 'notified' | 'blocked' | 'closed';

/** Ineffective outcomes in a row that escalate the key. */
export const ESCALATE_AFTER = 3;

export type DecisionState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly decisionId: string;
      readonly category: string;
      readonly key: string;
      readonly policy: PolicyDeclaration;
      readonly episode: number;
      readonly status: DecisionStatus;
      readonly disposition: Disposition;
      readonly approvedBy: 'policy' | 'approvers' | null;
      readonly signal: Signal;
      readonly plan: RemediationPlan;
      readonly planDigest: string;
      readonly expiresAt: string | null;
      readonly approvals: readonly string[];
      readonly cooldownUntil: string | null;
      readonly settleUntil: string | null;
      readonly ineffectiveStreak: number;
      readonly escalated: boolean;
      /** Why the last episode closed: `rejected`, `expired`, `outcome`, `resolved`; null while none has. */
      readonly closedReason: 'rejected' | 'expired' | 'outcome' | 'resolved' | null;
    };

export type ExistingDecision = Extract<DecisionState, { exists: true }>;

/** Open episodes absorb repeats of their signal; only a closed one lets a new episode start. */
export const isOpen = (s: DecisionState): boolean => s.exists && s.status !== 'closed';

const plusMs = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

function evolve(state: DecisionState, event: DecisionEvent): DecisionState {
  if (event.type === 'DecisionOpened') {
    const d = event.data;
    const status: DecisionStatus =
      d.disposition === 'auto' ? 'approved' : d.disposition === 'require' ? 'pending' : d.disposition === 'notify' ? 'notified' : 'blocked';
    const previous = state.exists ? state : undefined;
    return {
      exists: true,
      decisionId: d.decisionId,
      category: d.category,
      key: d.key,
      policy: d.policy,
      episode: d.episode,
      status,
      disposition: d.disposition,
      approvedBy: status === 'approved' ? 'policy' : null,
      signal: d.signal,
      plan: d.plan,
      planDigest: d.planDigest,
      expiresAt: d.expiresAt,
      approvals: [],
      cooldownUntil: null,
      settleUntil: null,
      ineffectiveStreak: previous?.ineffectiveStreak ?? 0,
      // Escalation forces `require` on the one next episode; it is spent once that episode opened.
      escalated: false,
      closedReason: null,
    };
  }
  if (!state.exists) return state;
  switch (event.type) {
    case 'DecisionUpdated':
      return { ...state, signal: event.data.signal, plan: event.data.plan, planDigest: event.data.planDigest, approvals: [] };
    case 'DecisionApprovalRecorded':
      return { ...state, approvals: [...state.approvals, event.data.approverId] };
    case 'DecisionApproved':
      return { ...state, status: 'approved', approvedBy: event.data.by };
    case 'DecisionApprovalRequired':
      return { ...state, status: 'pending', approvedBy: null, disposition: 'require', expiresAt: event.data.expiresAt };
    case 'DecisionRejected':
      return { ...state, status: 'closed', cooldownUntil: event.data.cooldownUntil, closedReason: event.data.reason };
    case 'DecisionRemediationStarted':
      return { ...state, status: 'running', settleUntil: event.data.settleUntil };
    case 'DecisionOutcomeRecorded':
      return { ...state, status: 'closed', ineffectiveStreak: event.data.ineffectiveStreak, escalated: event.data.escalated, closedReason: 'outcome' };
    case 'DecisionResolved':
      return { ...state, status: 'closed', closedReason: 'resolved' };
  }
  return state;
}

/** One aggregate per category and natural key (`bc.evt.autonomy.decision.<decisionIdOf(category, key)>`). */
export const decisionAggregate = defineAggregate<DecisionState, DecisionEvent>({
  module: 'autonomy',
  type: 'decision',
  initialState: { exists: false },
  catalog: new EventCatalog(decisionEvents),
  evolve,
});

export { cooldownMsOf, plusMs };
