import { fc, test } from '@fast-check/vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../services/platform/commands/keyedMutex.ts';

describe('KeyedMutex', () => {
  it('KeyedMutex runs tasks on one key one at a time, in call order', async () => {
    const mutex = new KeyedMutex();
    const trace: string[] = [];
    const task = (name: string, ms: number) => async () => {
      trace.push(`start ${name}`);
      await sleep(ms);
      trace.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([mutex.run('k', task('a', 15)), mutex.run('k', task('b', 1)), mutex.run('k', task('c', 5))]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(trace).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('KeyedMutex runs tasks on different keys concurrently', async () => {
    const mutex = new KeyedMutex();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const blocked = mutex.run('a', () => gate.then(() => 'a'));
    const other = await mutex.run('b', async () => 'b');
    expect(other).toBe('b');
    release();
    expect(await blocked).toBe('a');
  });

  it('KeyedMutex keeps serving a key after a task rejects or throws synchronously', async () => {
    const mutex = new KeyedMutex();
    const failing = mutex.run('k', async () => {
      throw new Error('boom');
    });
    const throwing = mutex.run('k', () => {
      throw new Error('sync boom');
    });
    const next = mutex.run('k', async () => 'after');
    await expect(failing).rejects.toThrow('boom');
    await expect(throwing).rejects.toThrow('sync boom');
    expect(await next).toBe('after');
  });

  test.prop([fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), delay: fc.nat(3), fails: fc.boolean() }), { maxLength: 25 })], { numRuns: 30 })(
    'KeyedMutex never overlaps tasks of one key and starts them in call order',
    async (tasks) => {
      const mutex = new KeyedMutex();
      const running = new Map<string, number>();
      const started: Record<string, number[]> = {};
      let overlapOnKey = false;
      let overlapAcrossKeys = 0;
      const settled = await Promise.allSettled(
        tasks.map((t, i) =>
          mutex.run(t.key, async () => {
            if ((running.get(t.key) ?? 0) > 0) overlapOnKey = true;
            running.set(t.key, (running.get(t.key) ?? 0) + 1);
            overlapAcrossKeys = Math.max(overlapAcrossKeys, [...running.values()].filter((n) => n > 0).length);
            (started[t.key] ??= []).push(i);
            await sleep(t.delay);
            running.set(t.key, running.get(t.key)! - 1);
            if (t.fails) throw new Error(`task ${i}`);
            return i;
          }),
        ),
      );
      expect(overlapOnKey).toBe(false);
      for (const [key, order] of Object.entries(started)) {
        expect(order).toEqual(tasks.flatMap((t, i) => (t.key === key ? [i] : [])));
      }
      settled.forEach((s, i) => expect(s.status).toBe(tasks[i]!.fails ? 'rejected' : 'fulfilled'));
      expect(overlapAcrossKeys).toBeLessThanOrEqual(new Set(tasks.map((t) => t.key)).size);
    },
  );
});
