import type { Accepted, Announcement, EngineCommand, Effect, Fold, Publication, Refusal } from './processManager.ts';

/** What running a reaction needs from its host; tests hand in fakes to run a process manager's reactions in memory. */
export interface EffectPorts<T, O = never> {
  /** Sends the command until it is answered: refused, or decided (appending events or not). */
  send(command: EngineCommand<T, O>): Promise<{ refusal: Refusal } | { appended: boolean; seq: number; events?: Accepted['events'] }>;
  publish(publication: Publication): Promise<void>;
  /** Publishes on core NATS; nothing is stored and nothing waits. (Only a process manager that announces needs it.) */
  announce?(announcement: Announcement): void;
  perform(task: T): Promise<readonly Effect<T, O>[]>;
  /**
   * Folds the observation, decides on it, runs the reactions (those on `key` in place) and waits for them all. (Only
   * a process manager whose tasks answer observations needs it.)
   */
  observe?(observation: O, key: string): Promise<void>;
  /** Whether a task's error is the model's to record (folded, the reaction carries on) rather than a failed reaction. */
  absorbs(error: unknown): boolean;
  /** Folds what came of an effect into the model. */
  fold(outcome: Exclude<Fold<never, T, O>, { type: 'event' } | { type: 'tick' } | { type: 'observed' }>): void;
  now(): number;
}

/** Folds the commands among effects about to run as decided, so the next decision already counts them. */
function decided<T, O>(effects: readonly Effect<T, O>[], ports: EffectPorts<T, O>): readonly Effect<T, O>[] {
  for (const e of effects) if (e.kind === 'command') ports.fold({ type: 'decided', command: e });
  return effects;
}

/**
 * Runs effects in order (under `key`, the reaction's). A refused command whose `ifRefused` answers effects runs those
 * instead of the rest; an accepted one's `ifAccepted` effects run before the rest; a task's effects run where the
 * task stood. Every outcome is folded before the next effect starts, so a later effect (a task reading the model)
 * sees what the earlier ones did.
 */
export async function runEffects<T, O = never>(effects: readonly Effect<T, O>[], ports: EffectPorts<T, O>, key = ''): Promise<void> {
  for (const effect of effects) {
    switch (effect.kind) {
      case 'command': {
        const outcome = await ports.send(effect);
        if ('refusal' in outcome) {
          ports.fold({ type: 'sent', command: effect, refusal: outcome.refusal });
          const instead = effect.ifRefused?.(outcome.refusal);
          if (instead) return runEffects(decided(instead, ports), ports, key);
          break;
        }
        const { appended, seq, events = [] } = outcome;
        ports.fold({ type: 'sent', command: effect, appended, seq });
        const next = effect.ifAccepted?.({ appended, events });
        if (next) await runEffects(decided(next, ports), ports, key);
        break;
      }
      case 'publish':
        await ports.publish(effect);
        break;
      case 'announce':
        if (!ports.announce) throw new Error('an announcement was decided but the host announces nothing');
        ports.announce(effect);
        break;
      case 'observe':
        if (!ports.observe) throw new Error('an observation was answered but the host decides on none');
        await ports.observe(effect.observation, key);
        break;
      case 'task': {
        let more: readonly Effect<T, O>[];
        try {
          more = await ports.perform(effect.task);
        } catch (error) {
          ports.fold({ type: 'performed', task: effect.task, error, now: ports.now() });
          if (ports.absorbs(error)) return;
          throw error;
        }
        ports.fold({ type: 'performed', task: effect.task, now: ports.now() });
        await runEffects(decided(more, ports), ports, key);
        break;
      }
    }
  }
}
