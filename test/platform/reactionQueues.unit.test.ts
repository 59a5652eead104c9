import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ReactionQueues } from '../../services/platform/processManager/reactionQueues.ts';

describe('ReactionQueues', () => {
  it('runs one key in order and, with a limit, at most that many reactions at once across keys', async () => {
    const queues = new ReactionQueues(2);
    let running = 0;
    let most = 0;
    const order: string[] = [];
    const reaction = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      await sleep(5);
      order.push(name);
      running--;
    };
    const runs = ['a', 'b', 'c', 'd', 'e'].map((key) => queues.run(key, reaction(key)));
    runs.push(queues.run('a', reaction('a2')));
    expect(queues.busy('e')).toBe(true);
    await Promise.all(runs);
    await queues.idle();
    expect(most).toBe(2);
    expect(order).toHaveLength(6);
    expect(order.indexOf('a2')).toBeGreaterThan(order.indexOf('a'));
    expect(queues.busy('a')).toBe(false);
  });

  it('frees a slot when a reaction fails', async () => {
    const queues = new ReactionQueues(1);
    await expect(queues.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(queues.run('b', () => Promise.resolve())).resolves.toBeUndefined();
  });

  it('runs different keys all at once without a limit', async () => {
    const queues = new ReactionQueues();
    let running = 0;
    let most = 0;
    const reaction = async () => {
      running++;
      most = Math.max(most, running);
      await sleep(5);
      running--;
    };
    await Promise.all(['a', 'b', 'c', 'd'].map((key) => queues.run(key, reaction)));
    expect(most).toBe(4);
  });
});
