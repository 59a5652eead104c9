import { fromSeed } from '@nats-io/nkeys';
import { describe, expect, test } from 'vitest';
import { agentUserKeyOfSeed, createAgentUserKey } from '../../services/platform/nats/agentCredentials.ts';

describe('createAgentUserKey', () => {
  test("makes a user nkey whose public key is the one nkeys derives from its seed, and signs as nkeys' pair does", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const key = createAgentUserKey();
      const pair = fromSeed(key.seed);
      expect(key.publicKey).toMatch(/^U[A-Z2-7]{55}$/);
      expect(new TextDecoder().decode(key.seed)).toMatch(/^SU[A-Z2-7]{56}$/);
      expect(pair.getPublicKey()).toBe(key.publicKey);
      expect(agentUserKeyOfSeed(key.seed).publicKey).toBe(key.publicKey);
      const data = new TextEncoder().encode(`nonce ${i}`);
      expect(pair.verify(data, pair.sign(data))).toBe(true);
      seen.add(key.publicKey);
    }
    expect(seen.size).toBe(20);
  });
});
