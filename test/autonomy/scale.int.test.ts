import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { signalOf, startAutonomy } from './autonomyFixture.ts';

describe('autonomy at scale (acceptance 2)', () => {
  it('10,000 signals over 100 keys in 10 passes, two engine replicas: exactly 100 decisions, at most one pending request per key', async () => {
    await using env = await startAutonomy();
    await env.startEngine();
    await env.startEngine();
    const keys = Array.from({ length: 100 }, (_, i) => `n${i}`);
    for (let pass = 0; pass < 10; pass++) {
      // 1,000 signals per pass: every key ten times, with details that change so pending requests update in place.
      const signals = Array.from({ length: 1_000 }, (_, i) =>
        signalOf('node-failed', keys[i % 100]!, { detail: `failed, pass ${pass} copy ${Math.floor(i / 100)}` }),
      );
      await env.publishPass(signals);
    }
    await env.settled(60_000);
    const opened = await env.eventsOf('bc.evt.autonomy.decision.*', 'DecisionOpened');
    expect(new Set(opened.map((e) => e.subject)).size).toBe(100);
    expect(opened).toHaveLength(100);
    for (const key of keys) {
      const d = await env.decision(decisionIdOf('retry', key));
      expect(d).toMatchObject({ exists: true, episode: 1, status: 'pending' });
    }
  });
});
