import { describe, expect, it } from 'vitest';
import {
  CHARS_PER_MESSAGE,
  MAX_STATE_CHARS,
  decodeCarriedState,
  encodeCarriedState,
  wholeStateChars,
} from '../../services/platform/commands/aggregateState.ts';
import type { AggregateDefinition } from '../../services/platform/commands/commandDefinition.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';

const versioned = (stateVersion: number | undefined) => ({ ...nodeAggregate, stateVersion }) as AggregateDefinition<unknown>;

describe('carried aggregate state', () => {
  it('round-trips a state under its fold version, with where its remembered command ids begin', () => {
    const state = { exists: true, state: 'ready', labels: { rack: 'a' }, current: null };
    const { value, chars } = encodeCarriedState(versioned(3), state, 5, undefined, 41)!;
    expect(value.startsWith('3 41 {')).toBe(true);
    expect(chars).toBe(JSON.stringify(state).length);
    expect(wholeStateChars(versioned(3), value)).toBe(chars);
    expect(decodeCarriedState(versioned(3), value, 57)).toEqual({ state, commandsFrom: 41, chars });
    // 0: the carrying message is the oldest remembered, so its own sequence.
    expect(decodeCarriedState(versioned(3), encodeCarriedState(versioned(3), state, 1, undefined, undefined)!.value, 57)).toMatchObject({ commandsFrom: 57 });
  });

  it('carries a long state whole every ceil(length / CHARS_PER_MESSAGE) messages, naming the last whole one between', () => {
    const state = { blob: 'x'.repeat(3 * CHARS_PER_MESSAGE) };
    const whole = encodeCarriedState(versioned(1), state, 10, undefined, 3)!;
    expect(whole.chars).toBeGreaterThan(3 * CHARS_PER_MESSAGE);
    const at = { seq: 90, length: 10, chars: whole.chars! };
    // 3 * 1024 + 11 characters: every 4th message.
    for (const position of [11, 12, 13]) expect(encodeCarriedState(versioned(1), state, position, at, 3)).toEqual({ value: '1 @90' });
    expect(encodeCarriedState(versioned(1), state, 14, at, 3)?.chars).toBe(whole.chars);
    expect(decodeCarriedState(versioned(1), '1 @90', 95)).toEqual({ stateAt: 90 });
    expect(wholeStateChars(versioned(1), '1 @90')).toBeUndefined();
    // A small state goes with every message.
    expect(encodeCarriedState(versioned(1), { a: 1 }, 11, { seq: 90, length: 10, chars: 7 }, 3)?.chars).toBe(7);
  });

  it('ignores a state of another fold version, an aggregate that declares none, and a value that is not one', () => {
    const { value } = encodeCarriedState(versioned(1), { exists: false }, 1, undefined, 2)!;
    expect(decodeCarriedState(versioned(2), value, 9)).toBeUndefined();
    expect(decodeCarriedState(versioned(undefined), value, 9)).toBeUndefined();
    expect(encodeCarriedState(versioned(undefined), { exists: false }, 1, undefined, 2)).toBeUndefined();
    for (const bad of ['', '1', '1 2', '1 x {}', '1 2 {', '1 -1 {}', '1 10 {}', '11 2 {}', '1 @', '1 @9', '1 @0', '1 @x', '2 @3']) {
      expect(decodeCarriedState(versioned(1), bad, 9), bad).toBeUndefined();
    }
  });

  it(`carries no state longer than ${MAX_STATE_CHARS} characters of JSON`, () => {
    expect(encodeCarriedState(versioned(1), { blob: 'x'.repeat(MAX_STATE_CHARS - 20) }, 1, undefined, 1)).toBeDefined();
    expect(encodeCarriedState(versioned(1), { blob: 'x'.repeat(MAX_STATE_CHARS) }, 1, undefined, 1)).toBeUndefined();
  });
});
