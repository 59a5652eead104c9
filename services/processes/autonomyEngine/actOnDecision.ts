import { autonomyCommandId } from '../../../schemas/autonomy/ids.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import type { ExistingDecision } from '../../autonomy/decision/decision.ts';
import type { Announcement, EngineCommand, Effect } from '../../platform/processManager/processManager.ts';
import type { PassMarker, Signal } from '../../../schemas/autonomy/signals.ts';
import type { AutonomyEngineSettings, EngineObservation, EngineTask, StartView } from './passInputs.ts';
import { clearanceCommand, isHoldingAction } from './remediations.ts';

export type EngineEffect = Effect<EngineTask, EngineObservation>;
type Command = EngineCommand<EngineTask, EngineObservation>;

/** Tells an owner's people (`bc.notify.<owner>`) of a request, a notice or an escalation. */
export const notice = (owner: string, kind: string, decisionId: string, signal: Signal): Announcement => ({
  kind: 'announce',
  subject: Subjects.notify(owner),
  data: { kind, owner, decisionId, signal: { kind: signal.kind, key: signal.key, detail: signal.detail } },
});

/**
 * The engine's commands: every domain refusal settles one (a budget used up, a quota, a decision moved on), only
 * infrastructure trouble is retried, with the id derived from decision, episode and step so a retry is the same command.
 */
const command = (name: string, payload: unknown, commandId: string, more: Pick<Command, 'ifRefused' | 'ifAccepted'> = {}): Command => ({
  kind: 'command',
  name,
  payload,
  commandId,
  settles: 'refusal',
  ...more,
});

/** What a decision read after the pass opened it calls for: an approved one starts, a running one is judged. */
export function actOn(observation: Extract<EngineObservation, { type: 'after' }>, settings: AutonomyEngineSettings): EngineEffect[] {
  const { state, start, pass, now } = observation;
  if (!state.exists) return [];
  if (state.status === 'approved') return start ? startRemediation(state, start, settings) : [];
  if (state.status !== 'running' && state.status !== 'notified' && state.status !== 'blocked') return [];
  return judge(state, pass.passId, pass.opening !== undefined, sensorOk(state.category, pass.sensors, settings), now);
}

/**
 * An approved decision's remediation: budget first when policy approved it (fail closed: anything but a confirmed
 * consumption turns the decision into an approval request), then its commands in order, then the record that it
 * started. Each id derives from decision, episode and place: a start resumed by a later pass (or another replica)
 * sends the same commands, and the log keeps one of each.
 */
export function startRemediation(d: ExistingDecision, { controls, remediation, budgetFault }: StartView, settings: AutonomyEngineSettings): EngineEffect[] {
  if (controls.halted || controls.paused.includes(d.policy.owner)) return [];
  if (!remediation || remediation.length === 0) return [];
  const ref = { decisionId: d.decisionId, episode: d.episode };
  const requireApproval = (reason: string): EngineEffect[] => [
    command('autonomy.requireApproval', { ...ref, reason: reason.slice(0, 400) }, autonomyCommandId('require', d.decisionId, d.episode), {
      ifAccepted: ({ appended }) => (appended ? [notice(d.policy.owner, 'approval-requested', d.decisionId, d.signal)] : undefined),
    }),
  ];
  if (d.approvedBy === 'policy' && budgetFault !== undefined) return requireApproval(`budget path failed: ${budgetFault}`);
  const ids = remediation.map((_, i) =>
    i === 0 ? autonomyCommandId('remediate', d.decisionId, d.episode) : autonomyCommandId('remediate', d.decisionId, d.episode, i),
  );
  const started = command(
    'autonomy.recordStarted',
    {
      ...ref,
      commandName: remediation
        .map((c) => c.name)
        .join('+')
        .slice(0, 100),
      commandId: ids[0]!,
      settleMs: settings.settleMs,
    },
    autonomyCommandId('started', d.decisionId, d.episode),
  );
  const effects: EngineEffect[] = [];
  if (d.approvedBy === 'policy') {
    const budget = { scope: d.policy.owner, windowMs: settings.budgetWindowMs, limit: settings.budget, ...ref };
    effects.push(
      command('autonomy.consumeBudget', budget, autonomyCommandId('budget', d.decisionId, d.episode), {
        ifRefused: (refusal) => requireApproval(`${refusal.code}: ${refusal.message}`),
      }),
    );
  }
  for (const [i, { name, payload }] of remediation.entries()) {
    // A step that must wait for the one before it to take effect (a recreation's create while the deleted instance
    // still holds its quota) stops here: the next pass sends the same commands again. Any other refusal is the
    // remediation's outcome to say: it is recorded as started.
    effects.push(command(name, payload, ids[i]!, { ifRefused: (refusal) => (i > 0 && refusal.code === 'QUOTA_EXCEEDED' ? [] : [started]) }));
  }
  effects.push(started);
  return effects;
}

/**
 * A started remediation's outcome once it settled: a holding action (BMC maintenance) lasts while its signal does and
 * is cleared once it is gone; a notified or blocked decision closes when its signal is gone. Never on a pass whose
 * sensors failed: an absent signal then says nothing.
 */
export function judge(d: ExistingDecision, passId: string, signalPresent: boolean, ok: boolean, now: number): EngineEffect[] {
  const effects: EngineEffect[] = [];
  if (d.status === 'running') {
    if (d.settleUntil !== null && Date.parse(d.settleUntil) > now) return [];
    if (isHoldingAction(d) && (signalPresent || !ok)) return [];
    const clearance = !signalPresent && ok ? clearanceCommand(d) : undefined;
    if (clearance) effects.push(command(clearance.name, clearance.payload, autonomyCommandId('clear', d.decisionId, d.episode)));
  } else if (signalPresent || !ok) return [];
  const outcome = { decisionId: d.decisionId, episode: d.episode, passId, signalPresent, sensorOk: ok };
  effects.push(
    command('autonomy.recordOutcome', outcome, autonomyCommandId('outcome', d.decisionId, d.episode, passId), {
      ifAccepted: ({ events }) => {
        const recorded = events[0]?.data as { escalated?: boolean } | undefined;
        return recorded?.escalated ? [notice(d.policy.owner, 'escalated', d.decisionId, d.signal)] : undefined;
      },
    }),
  );
  return effects;
}

/** A category's sensors all reported ok in this pass (the ones emitting a signal kind bound to it). */
export function sensorOk(category: string, reports: PassMarker['sensors'], settings: AutonomyEngineSettings): boolean {
  const ok = new Map(reports.map((r) => [r.sensor, r.ok]));
  const kinds = new Set(settings.bindings.filter((b) => b.category === category).map((b) => b.signal));
  const sensors = settings.sensors.filter((s) => s.emits.some((k) => kinds.has(k)));
  return sensors.length > 0 && sensors.every((s) => ok.get(s.name) === true);
}
