import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyIdOf as codecKeyIdOf } from '../../schemas/agent/agentResultCodec.ts';
import { keyIdOf, ramdiskAgentId } from '../../schemas/trust/agentIds.ts';
import { rotationMessage } from '../../schemas/trust/commands.ts';
import type { AgentEvent, TrustEvent } from '../../schemas/trust/events.ts';
import type { JoinTokenState } from '../../services/trust/joinToken/joinToken.ts';
import { agentAggregate } from '../../services/trust/agent/agent.ts';
import { registerAgent } from '../../services/trust/agent/register.ts';
import { deciderSpec } from './spec.ts';

const given = deciderSpec(agentAggregate);
const newKey = () => Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
const newKeyPair = (): { privateKey: KeyObject; publicKey: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64') };
};
/** A join token the join service spent for `agentId` and the key `keyId`. */
const spentToken = (tokenId: string, agentId: string, keyId: string): JoinTokenState => ({
  exists: true,
  tokenId,
  hash: '0'.repeat(64),
  role: 'site',
  siteId: 'dc1',
  nodeId: null,
  expiresAt: '2027-01-01T00:00:00.000Z',
  expect: null,
  attestor: 'issued',
  usedBy: agentId,
  usedForKeyId: keyId,
  refusals: 0,
});

describe('agent.register', () => {
  it('registers a site agent under site-<siteId> with keyId = base64url(sha256(raw key))', () => {
    const publicKey = newKey();
    const keyId = keyIdOf(publicKey);
    expect(keyId).toBe(codecKeyIdOf(Buffer.from(publicKey, 'base64')));
    const registered: TrustEvent = { type: 'AgentRegistered', data: { agentId: 'site-dc1', role: 'site', siteId: 'dc1', nodeId: null, publicKey, keyId } };
    given([]).when(registerAgent, { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey }).then([registered]);
    given([registered]).when(registerAgent, { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey }).then([]);
    given([]).when(registerAgent, { agentId: 'site-dc2', role: 'site', siteId: 'dc1', publicKey }).thenRejects('VALIDATION_FAILED');
  });

  it('replaces a key only with the registered key signature over the new one, else refuses and audits', () => {
    const current = newKeyPair();
    const keyId = keyIdOf(current.publicKey);
    const registered: TrustEvent = {
      type: 'AgentRegistered',
      data: { agentId: 'site-dc1', role: 'site', siteId: 'dc1', nodeId: null, publicKey: current.publicKey, keyId },
    };
    const next = newKey();
    const rotation = { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey: next };
    const refusal = (reason: string) => [
      {
        type: 'AgentRegistrationRefused',
        data: { agentId: 'site-dc1', role: 'site', siteId: 'dc1', nodeId: null, publicKey: next, keyId: keyIdOf(next), reason },
      },
    ];
    given([registered])
      .when(registerAgent, rotation)
      .then(refusal('AGENT_KEY_UNPROVEN') as AgentEvent[]);
    const signedBy = (key: KeyObject, over = next) => sign(null, rotationMessage('site-dc1', keyId, keyIdOf(over)), key).toString('base64');
    given([registered])
      .when(registerAgent, { ...rotation, rotationSignature: signedBy(newKeyPair().privateKey) })
      .then(refusal('AGENT_KEY_UNPROVEN') as AgentEvent[]);
    given([registered])
      .when(registerAgent, { ...rotation, rotationSignature: signedBy(current.privateKey, newKey()) })
      .then(refusal('AGENT_KEY_UNPROVEN') as AgentEvent[]);
    given([registered])
      .when(registerAgent, { ...rotation, rotationSignature: signedBy(current.privateKey) })
      .then([{ type: 'AgentKeyRotated', data: { ...registered.data, publicKey: next, keyId: keyIdOf(next), previousKeyId: keyId } }]);
    // A refusal is an audit record only: the registered key stays.
    const refused = given([registered])
      .when(registerAgent, rotation)
      .then(() => undefined);
    expect(given([registered, ...refused]).state).toMatchObject({ exists: true, keyId });
  });

  it('registers only the agent its caller is, whatever id the request names', () => {
    const publicKey = newKey();
    given([])
      .when(registerAgent, { agentId: 'site-dc2', role: 'site', siteId: 'dc2', publicKey, caller: 'site-evil' })
      .then([
        {
          type: 'AgentRegistrationRefused',
          data: { agentId: 'site-dc2', role: 'site', siteId: 'dc2', nodeId: null, publicKey, keyId: keyIdOf(publicKey), reason: 'AGENT_IDENTITY_MISMATCH' },
        },
      ]);
    given([])
      .when(registerAgent, { agentId: 'site-dc2', role: 'site', siteId: 'dc2', publicKey, caller: 'site-dc2' })
      .then((e) => expect(e.map((x) => x.type)).toEqual(['AgentRegistered']));
  });

  it('lets a join token spent for this agent and key replace the key once, and no other token or key', () => {
    const old = newKey();
    const registered: TrustEvent = {
      type: 'AgentRegistered',
      data: { agentId: 'site-dc1', role: 'site', siteId: 'dc1', nodeId: null, publicKey: old, keyId: keyIdOf(old) },
    };
    const fresh = newKey();
    const rejoin = { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey: fresh, joinTokenId: 'jt-aaaaaaaaaaaaaaaaaaaa' };
    const token = spentToken('jt-aaaaaaaaaaaaaaaaaaaa', 'site-dc1', keyIdOf(fresh));
    const rotated = given([registered])
      .when(registerAgent, rejoin, { dependencies: token })
      .then((e) => expect(e).toMatchObject([{ type: 'AgentKeyRotated', data: { keyId: keyIdOf(fresh), joinTokenId: 'jt-aaaaaaaaaaaaaaaaaaaa' } }]));
    const unproven = (e: readonly TrustEvent[]) => expect(e).toMatchObject([{ type: 'AgentRegistrationRefused', data: { reason: 'AGENT_KEY_UNPROVEN' } }]);
    // The token authorises the key it was spent for, for the agent that spent it, and nothing else.
    given([registered])
      .when(registerAgent, rejoin, { dependencies: spentToken(rejoin.joinTokenId, 'site-dc1', keyIdOf(newKey())) })
      .then(unproven);
    given([registered])
      .when(registerAgent, rejoin, { dependencies: spentToken(rejoin.joinTokenId, 'site-dc2', keyIdOf(fresh)) })
      .then(unproven);
    given([registered]).when(registerAgent, rejoin, { dependencies: null }).then(unproven);
    // Spent once: after a later rotation it cannot bring its key back.
    const later = newKeyPair();
    const away: TrustEvent = {
      type: 'AgentKeyRotated',
      data: {
        agentId: 'site-dc1',
        role: 'site',
        siteId: 'dc1',
        nodeId: null,
        publicKey: later.publicKey,
        keyId: keyIdOf(later.publicKey),
        previousKeyId: keyIdOf(fresh),
      },
    };
    given([registered, ...rotated, away])
      .when(registerAgent, rejoin, { dependencies: token })
      .then(unproven);
    // The same join answered again (a lost reply) changes nothing.
    given([registered, ...rotated])
      .when(registerAgent, rejoin, { dependencies: token })
      .then([]);
  });

  it('binds a ramdisk agent id to its node and key', () => {
    const publicKey = newKey();
    const agentId = ramdiskAgentId('n1', keyIdOf(publicKey));
    expect(agentId).toMatch(/^ramdisk-n1-[a-z0-9]{8}$/);
    given([])
      .when(registerAgent, { agentId, role: 'ramdisk', siteId: 'dc1', nodeId: 'n1', publicKey })
      .then((e) => expect(e).toMatchObject([{ type: 'AgentRegistered', data: { role: 'ramdisk', nodeId: 'n1' } }]));
    given([])
      .when(registerAgent, { agentId: ramdiskAgentId('n2', keyIdOf(publicKey)), role: 'ramdisk', siteId: 'dc1', nodeId: 'n1', publicKey })
      .thenRejects('VALIDATION_FAILED');
    given([]).when(registerAgent, { agentId, role: 'ramdisk', siteId: 'dc1', publicKey }).thenRejects('VALIDATION_FAILED');
  });
});
