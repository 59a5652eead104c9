import { describe, expect, it } from 'vitest';
import { openOnFirstUse } from '../../services/platform/openOnFirstUse.ts';

describe('openOnFirstUse', () => {
  it('opens once for every use, concurrent first uses included', async () => {
    let opens = 0;
    const bucket = openOnFirstUse(async () => ({ n: ++opens }));
    const [a, b] = await Promise.all([bucket(), bucket()]);
    expect(await bucket()).toBe(a);
    expect(b).toBe(a);
    expect(opens).toBe(1);
  });

  // Regression (natsRestart e2e): the executor kept the rejected open of its blob bucket, first tried while
  // nats-server restarted, and failed every later userdata.write with that same timeout.
  it('forgets a failed open, so the next use opens again', async () => {
    let opens = 0;
    const bucket = openOnFirstUse(async () => {
      if (++opens === 1) throw new Error('timeout');
      return 'bucket';
    });
    await expect(bucket()).rejects.toThrow('timeout');
    expect(await bucket()).toBe('bucket');
    expect(await bucket()).toBe('bucket');
    expect(opens).toBe(2);
  });
});
