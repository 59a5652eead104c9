import { describe, expect, it } from 'vitest';
import { MAX_STATE_CHARS, decodeCarriedState, encodeCarriedState } from '../../services/platform/commands/aggregateState.ts';
import type { AggregateDefinition } from '../../services/platform/commands/commandDefinition.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';

const versioned = (stateVersion: number | undefined) => ({ ...nodeAggregate, stateVersion }) as AggregateDefinition<unknown>;

describe('carried aggregate state', () => {
  it('round-trips a state under its fold version, with where its remembered command ids begin', () => {
    const state = { exists: true, state: 'ready', labels: { rack: 'a' }, current: null };
    const value = encodeCarriedState(versioned(3), state, 41)!;
    expect(value.startsWith('3 41 {')).toBe(true);
    expect(decodeCarriedState(versioned(3), value, 57)).toEqual({ state, commandsFrom: 41 });
    // 0: the carrying message is the oldest remembered, so its own sequence.
    expect(decodeCarriedState(versioned(3), encodeCarriedState(versioned(3), state, undefined)!, 57)).toEqual({ state, commandsFrom: 57 });
  });

  it('ignores a state of another fold version, an aggregate that declares none, and a value that is not one', () => {
    const value = encodeCarriedState(versioned(1), { exists: false }, 2)!;
    expect(decodeCarriedState(versioned(2), value, 9)).toBeUndefined();
    expect(decodeCarriedState(versioned(undefined), value, 9)).toBeUndefined();
    expect(encodeCarriedState(versioned(undefined), { exists: false }, 2)).toBeUndefined();
    for (const bad of ['', '1', '1 2', '1 x {}', '1 2 {', '1 -1 {}', '1 10 {}', '11 2 {}'])
      expect(decodeCarriedState(versioned(1), bad, 9), bad).toBeUndefined();
  });

  it(`carries no state longer than ${MAX_STATE_CHARS} characters of JSON`, () => {
    const fits = { blob: 'x'.repeat(MAX_STATE_CHARS - 20) };
    const over = { blob: 'x'.repeat(MAX_STATE_CHARS) };
    expect(encodeCarriedState(versioned(1), fits, 1)).toBeDefined();
    expect(encodeCarriedState(versioned(1), over, 1)).toBeUndefined();
  });
});
