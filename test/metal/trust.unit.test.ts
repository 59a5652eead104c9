import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyIdOf as codecKeyIdOf } from '../../schemas/agent/agentResultCodec.ts';
import { keyIdOf, ramdiskAgentId } from '../../schemas/trust/agentIds.ts';
import type { TrustEvent } from '../../schemas/trust/events.ts';
import { agentAggregate } from '../../services/trust/agent/agent.ts';
import { registerAgent } from '../../services/trust/agent/register.ts';
import { deciderSpec } from './spec.ts';

const given = deciderSpec(agentAggregate);
const newKey = () => Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');

describe('agent.register', () => {
  it('registers a site agent under site-<siteId> with keyId = base64url(sha256(raw key))', () => {
    const publicKey = newKey();
    const keyId = keyIdOf(publicKey);
    expect(keyId).toBe(codecKeyIdOf(Buffer.from(publicKey, 'base64')));
    const registered: TrustEvent = { type: 'AgentRegistered', data: { agentId: 'site-dc1', role: 'site', siteId: 'dc1', nodeId: null, publicKey, keyId } };
    given([]).when(registerAgent, { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey }).then([registered]);
    given([registered]).when(registerAgent, { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey }).then([]);
    const rotated = newKey();
    given([registered])
      .when(registerAgent, { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey: rotated })
      .then([{ type: 'AgentKeyRotated', data: { ...registered.data, publicKey: rotated, keyId: keyIdOf(rotated), previousKeyId: keyId } }]);
    given([]).when(registerAgent, { agentId: 'site-dc2', role: 'site', siteId: 'dc1', publicKey }).thenRejects('VALIDATION_FAILED');
  });

  it('binds a ramdisk agent id to its node and key', () => {
    const publicKey = newKey();
    const agentId = ramdiskAgentId('n1', keyIdOf(publicKey));
    expect(agentId).toMatch(/^ramdisk-n1-[a-z0-9]{8}$/);
    given([])
      .when(registerAgent, { agentId, role: 'ramdisk', siteId: 'dc1', nodeId: 'n1', publicKey })
      .then((e) => expect(e).toMatchObject([{ type: 'AgentRegistered', data: { role: 'ramdisk', nodeId: 'n1' } }]));
    given([]).when(registerAgent, { agentId: ramdiskAgentId('n2', keyIdOf(publicKey)), role: 'ramdisk', siteId: 'dc1', nodeId: 'n1', publicKey }).thenRejects('VALIDATION_FAILED');
    given([]).when(registerAgent, { agentId, role: 'ramdisk', siteId: 'dc1', publicKey }).thenRejects('VALIDATION_FAILED');
  });
});
