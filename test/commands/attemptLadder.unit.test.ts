import { describe, expect, it } from 'vitest';
import { AttemptLadder } from '../../services/platform/commands/attemptLadder.ts';

/** A ladder on a store whose reads may lag (a 3-replica stream) unless told otherwise; waits are the longest drawn. */
const ladder = (options: { readsMayLag?: boolean; retries?: number; random?: () => number } = {}) =>
  new AttemptLadder({ readsMayLag: options.readsMayLag ?? true, retries: options.retries ?? 3, random: options.random ?? (() => 1) });

describe('AttemptLadder: which state each attempt of a command decides on', () => {
  it('given a new command, then it is decided on the guess first, which is never final', () => {
    const given = ladder();
    expect(given.rung).toBe('guess');
    expect(given.guessing).toBe(true);
    expect(given.from).toBe('replica');
    expect(given.final).toBe(false);
  });

  it('given a guess, when it refuses or decides nothing, then the command is decided again on a replica read', () => {
    const given = ladder();
    expect(given.climbUnlessFinal()).toBe(true);
    expect(given.rung).toBe('replica');
    expect(given.guessing).toBe(false);
    expect(given.final).toBe(false);
  });

  it('given a replica read that may lag, when it refuses or decides nothing, then it is decided again at the leader, whose answer stands', () => {
    const given = ladder();
    given.climbUnlessFinal();
    expect(given.climbUnlessFinal()).toBe(true);
    expect(given.rung).toBe('leader');
    expect(given.final).toBe(true);
    expect(given.climbUnlessFinal()).toBe(false);
    expect(given.rung).toBe('leader');
  });

  it('given one replica (reads never lag), when a read refuses, then that refusal stands: no leader read', () => {
    const given = ladder({ readsMayLag: false });
    expect(given.final).toBe(false);
    expect(given.climbUnlessFinal()).toBe(true);
    expect(given.final).toBe(true);
    expect(given.climbUnlessFinal()).toBe(false);
    expect(given.from).toBe('replica');
  });

  it('given a guess, when its append conflicts, then a replica is read at once: no wait, no retry spent', () => {
    const given = ladder({ retries: 0 });
    expect(given.afterConflict()).toEqual({ retry: true });
    expect(given.rung).toBe('replica');
  });

  it('given a read, when its append conflicts, then the leader is read after a wait that doubles per conflict, up to retries', () => {
    const given = ladder({ retries: 3 });
    given.afterConflict();
    const waits = [given.afterConflict(), given.afterConflict(), given.afterConflict()];
    expect(waits).toEqual([
      { retry: true, backoffMs: 5 },
      { retry: true, backoffMs: 10 },
      { retry: true, backoffMs: 20 },
    ]);
    expect(given.rung).toBe('leader');
    expect(given.afterConflict()).toEqual({ retry: false });
  });

  it('given many conflicts, then a wait is drawn at random below a ceiling of one second', () => {
    const given = ladder({ retries: 20, random: () => 0.5 });
    given.afterConflict();
    const waits: (number | undefined)[] = [];
    for (let i = 0; i < 20; i++) {
      const next = given.afterConflict();
      waits.push(next.retry ? next.backoffMs : undefined);
    }
    expect(waits.slice(0, 3)).toEqual([2.5, 5, 10]);
    expect(Math.max(...(waits as number[]))).toBe(500);
  });

  it('given one replica, when a read conflicts, then it is read again from a replica (which is the leader)', () => {
    const given = ladder({ readsMayLag: false, retries: 1 });
    given.afterConflict();
    expect(given.afterConflict()).toMatchObject({ retry: true });
    expect(given.rung).toBe('replica');
    expect(given.afterConflict()).toEqual({ retry: false });
  });

  it('given a conflict after a refusal was decided again at the leader, then retries still count from zero', () => {
    const given = ladder({ retries: 1 });
    given.climbUnlessFinal();
    given.climbUnlessFinal();
    expect(given.afterConflict()).toEqual({ retry: true, backoffMs: 5 });
    expect(given.afterConflict()).toEqual({ retry: false });
  });
});
