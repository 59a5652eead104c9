import { autonomyCommandId, decisionIdOf } from '../../../schemas/autonomy/ids.ts';
import type { PassMarker, Signal } from '../../../schemas/autonomy/signals.ts';
import type { Binding } from '../../autonomy/bindings.ts';
import type { Effect, Fold, Input, Reaction } from '../../platform/processManager/processManager.ts';
import { actOn, notice, type EngineEffect } from './actOnDecision.ts';
import type { AutonomyEngineSettings, EngineObservation, EngineTask, Opening, PassContext } from './passInputs.ts';

/** The engine keeps no state of its own (each pass reads the log's): its model is its settings. */
export interface AutonomyEngineModel {
  readonly settings: AutonomyEngineSettings;
  readonly bindings: ReadonlyMap<string, Binding>;
}

export const autonomyEngineModel = (settings: AutonomyEngineSettings): AutonomyEngineModel => ({
  settings,
  bindings: new Map(settings.bindings.map((b) => [b.signal, b])),
});

type EngineFold = Fold<PassMarker, EngineTask, EngineObservation>;
type EngineInput = Input<PassMarker, EngineObservation>;
export type EngineReaction = Reaction<EngineTask, EngineObservation>;

/** Nothing to fold: every decision the engine makes reads the log afresh. */
export function evolveAutonomyEngine(_model: AutonomyEngineModel, _input: EngineFold): void {}

/** One pass at a time per replica: a pass's decisions see the log as the one before left it. */
export const PASS_KEY = 'pass';
const decisionKey = (decisionId: string) => `decision:${decisionId}`;
const task = (t: EngineTask): Effect<EngineTask, EngineObservation> => ({ kind: 'task', task: t });

/**
 * A pass marker: read the pass. The pass read: each decision the log holds or the pass opens is read, each on its own
 * key. A decision read before: the expiry sweep, then the opening (an owner is told of a request or a notice), then
 * read again. After: an approved decision starts, a running (or notified, blocked) one is judged (`actOnDecision`).
 */
export function decideAutonomyEngine(input: EngineInput, model: AutonomyEngineModel): EngineReaction[] {
  if (input.type !== 'event' && input.type !== 'observed') return [];
  if (input.type === 'event') return [{ key: PASS_KEY, effects: [task({ type: 'readPass', marker: input.event })] }];
  const observation = input.observation;
  if (observation.type === 'pass') return readEach(observation.marker, observation.signals, observation.decisionIds, model);
  const effects = observation.type === 'before' ? sweepAndOpen(observation) : actOn(observation, model.settings);
  return effects.length === 0 ? [] : [{ key: decisionKey(observation.decisionId), effects }];
}

/** The signals of a pass bound to a declared category, by the decision they open (the last of a key wins). */
export function boundSignals(signals: readonly Signal[], passId: string, model: AutonomyEngineModel): Map<string, Opening> {
  const bound = new Map<string, Opening>();
  for (const signal of signals) {
    const binding = model.bindings.get(signal.kind);
    const policy = binding ? model.settings.policies.get(binding.category) : undefined;
    if (!binding || !policy) continue;
    const opening = { category: binding.category, key: signal.key, passId, signal, policy, plan: binding.plan(signal) };
    bound.set(decisionIdOf(binding.category, signal.key), opening);
  }
  return bound;
}

function readEach(marker: PassMarker, signals: readonly Signal[], known: readonly string[], model: AutonomyEngineModel): EngineReaction[] {
  const bound = boundSignals(signals, marker.passId, model);
  return [...new Set([...known, ...bound.keys()])].map((decisionId) => {
    const opening = bound.get(decisionId);
    const pass: PassContext = { passId: marker.passId, ...(opening ? { opening } : {}), sensors: marker.sensors };
    return { key: decisionKey(decisionId), effects: [task({ type: 'readDecision', stage: 'before', decisionId, pass })] };
  });
}

function sweepAndOpen({ decisionId, pass, state, now }: Extract<EngineObservation, { type: 'before' }>): EngineEffect[] {
  const effects: EngineEffect[] = [];
  if (state.exists && state.status === 'pending' && state.expiresAt !== null && Date.parse(state.expiresAt) <= now) {
    const payload = { decisionId, episode: state.episode };
    effects.push({ kind: 'command', name: 'autonomy.expire', payload, commandId: autonomyCommandId('expire', decisionId, state.episode), settles: 'refusal' });
  }
  const { opening } = pass;
  if (opening) {
    effects.push({
      kind: 'command',
      name: 'autonomy.openDecision',
      payload: opening,
      commandId: autonomyCommandId('open', decisionId, pass.passId),
      settles: 'refusal',
      ifAccepted: ({ appended, events }) => {
        const opened = events.find((e) => e.type === 'DecisionOpened')?.data as { disposition: string } | undefined;
        if (!appended || !opened || opened.disposition === 'auto') return undefined;
        const kind = opened.disposition === 'require' ? 'approval-requested' : opened.disposition;
        return [notice(opening.policy.owner, kind, decisionId, opening.signal)];
      },
    });
  }
  effects.push(task({ type: 'readDecision', stage: 'after', decisionId, pass }));
  return effects;
}
