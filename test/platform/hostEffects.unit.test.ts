import { describe, expect, it } from 'vitest';
import type { CommandResult } from '../../schemas/api.ts';
import type { CommandChannel } from '../../services/platform/commands/commandChannel.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { sendEngineCommand } from '../../services/platform/processManager/engineCommands.ts';
import type { Effect } from '../../services/platform/processManager/processManager.ts';
import { runEffects, type EffectPorts } from '../../services/platform/processManager/runEffects.ts';

const log = createLogger('test', 'silent');
const result = (events: CommandResult['events'], duplicate = false): CommandResult => ({
  commandId: 'c',
  aggregate: { type: 'a', id: '1' },
  seq: 7,
  duplicate,
  events,
});

/** A channel answering each send with the next of `answers` (an error is thrown). */
function channel(answers: (CommandResult | PlatformError)[]): CommandChannel & { sends: number } {
  const ch = {
    sends: 0,
    send: async () => {
      const answer = answers[ch.sends++]!;
      if (answer instanceof PlatformError) throw answer;
      return answer;
    },
  };
  return ch;
}

describe('the host’s one retry policy (sendEngineCommand)', () => {
  const send = (ch: CommandChannel, settles?: 'moot' | 'refusal') => {
    let refused: string | undefined;
    const sent = sendEngineCommand(ch, log, new AbortController().signal, 'x.y', {}, 'id-1', {
      onRefused: (err) => (refused = err.code),
      ...(settles ? { settles } : {}),
    });
    return sent.then((r) => ({ result: r, refused }));
  };

  it('settles a moot refusal; retries infrastructure trouble under the same id', async () => {
    const ch = channel([new PlatformError('UNAVAILABLE', 'down'), new PlatformError('ILLEGAL_TRANSITION', 'done already')]);
    expect(await send(ch)).toEqual({ result: undefined, refused: 'ILLEGAL_TRANSITION' });
    expect(ch.sends).toBe(2);
  });

  it('settles any domain refusal of a command that declares `settles: refusal`, and only then', async () => {
    expect(await send(channel([new PlatformError('QUOTA_EXCEEDED', 'full')]), 'refusal')).toEqual({ result: undefined, refused: 'QUOTA_EXCEEDED' });
    const moot = channel([new PlatformError('QUOTA_EXCEEDED', 'full'), result([])]);
    expect((await send(moot)).result).toMatchObject({ seq: 7 });
    expect(moot.sends).toBe(2);
    const trouble = channel([new PlatformError('CONCURRENCY_CONFLICT', 'busy'), result([{ type: 'E', version: 1, data: {} }])]);
    expect((await send(trouble, 'refusal')).result).toMatchObject({ events: [{ type: 'E' }] });
    expect(trouble.sends).toBe(2);
  });
});

describe('runEffects: what an accepted command, an announcement and an observation do', () => {
  type O = { readonly read: string };
  const ports = (trace: string[], answer: (name: string) => Awaited<ReturnType<EffectPorts<never, O>['send']>>): EffectPorts<never, O> => ({
    send: async ({ name }) => (trace.push(`send ${name}`), answer(name)),
    publish: async () => undefined,
    announce: ({ subject }) => void trace.push(`announce ${subject}`),
    perform: async () => [],
    observe: async (observation, key) => void trace.push(`observe ${observation.read} on ${key}`),
    absorbs: () => false,
    fold: (outcome) => void trace.push(`fold ${outcome.type}`),
    now: () => 0,
  });
  const cmd = (name: string, more: Partial<Extract<Effect<never, O>, { kind: 'command' }>> = {}): Effect<never, O> => ({
    kind: 'command',
    name,
    payload: {},
    commandId: name,
    ...more,
  });

  it('runs an accepted command’s `ifAccepted` effects before the rest, from what it appended', async () => {
    const trace: string[] = [];
    const effects: Effect<never, O>[] = [
      cmd('open', { ifAccepted: ({ appended, events }) => (appended ? [{ kind: 'announce', subject: `bc.notify.${events[0]!.type}`, data: {} }] : undefined) }),
      cmd('next'),
      { kind: 'observe', observation: { read: 'decision' } },
    ];
    await runEffects(
      effects,
      ports(trace, () => ({ appended: true, seq: 1, events: [{ type: 'Opened', data: {} }] })),
      'k',
    );
    expect(trace).toEqual(['send open', 'fold sent', 'announce bc.notify.Opened', 'send next', 'fold sent', 'observe decision on k']);
  });

  it('a repeat (nothing appended) announces nothing; a refusal runs `ifRefused` instead of the rest', async () => {
    const trace: string[] = [];
    const effects: Effect<never, O>[] = [
      cmd('open', { ifAccepted: ({ appended }) => (appended ? [{ kind: 'announce', subject: 'bc.notify.x', data: {} }] : undefined) }),
      cmd('budget', { ifRefused: () => [cmd('require')] }),
      cmd('remediate'),
    ];
    await runEffects(
      effects,
      ports(trace, (name) => (name === 'budget' ? { refusal: { code: 'BUDGET_EXHAUSTED', message: 'used up' } } : { appended: false, seq: 1, events: [] })),
    );
    expect(trace).toEqual(['send open', 'fold sent', 'send budget', 'fold sent', 'fold decided', 'send require', 'fold sent']);
  });
});
