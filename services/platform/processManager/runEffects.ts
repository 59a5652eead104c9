import type { EngineCommand, Effect, Fold, Publication, Refusal } from './processManager.ts';

/** What running a reaction needs from its host; tests hand in fakes to run a process manager's reactions in memory. */
export interface EffectPorts<T> {
  /** Sends the command until it is answered: refused, or decided (appending events or not). */
  send(command: EngineCommand<T>): Promise<{ refusal: Refusal } | { appended: boolean; seq: number }>;
  publish(publication: Publication): Promise<void>;
  perform(task: T): Promise<readonly Effect<T>[]>;
  /** Whether a task's error is the model's to record (folded, the reaction carries on) rather than a failed reaction. */
  absorbs(error: unknown): boolean;
  /** Folds what came of an effect into the model. */
  fold(outcome: Exclude<Fold<never, T>, { type: 'event' }>): void;
  now(): number;
}

/**
 * Runs effects in order. A refused command whose `ifRefused` answers effects runs those instead of the rest; a
 * task's effects run where the task stood. Every outcome is folded before the next effect starts, so a later effect
 * (a task reading the model) sees what the earlier ones did.
 */
export async function runEffects<T>(effects: readonly Effect<T>[], ports: EffectPorts<T>): Promise<void> {
  for (const effect of effects) {
    switch (effect.kind) {
      case 'command': {
        const outcome = await ports.send(effect);
        ports.fold({ type: 'sent', command: effect, ...outcome });
        const refusal = 'refusal' in outcome ? outcome.refusal : undefined;
        const instead = refusal ? effect.ifRefused?.(refusal) : undefined;
        if (instead) {
          for (const e of instead) if (e.kind === 'command') ports.fold({ type: 'decided', command: e });
          return runEffects(instead, ports);
        }
        break;
      }
      case 'publish':
        await ports.publish(effect);
        break;
      case 'task': {
        let more: readonly Effect<T>[];
        try {
          more = await ports.perform(effect.task);
        } catch (error) {
          ports.fold({ type: 'performed', task: effect.task, error, now: ports.now() });
          if (ports.absorbs(error)) return;
          throw error;
        }
        ports.fold({ type: 'performed', task: effect.task, now: ports.now() });
        for (const e of more) if (e.kind === 'command') ports.fold({ type: 'decided', command: e });
        await runEffects(more, ports);
        break;
      }
    }
  }
}
