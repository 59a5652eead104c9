import { PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateIdentity } from '../../daemon/agent/identity.ts';
import { rotationSignature, sendRegistration } from '../../daemon/agent/registration.ts';
import { requestSecretGrant } from '../../daemon/site/grantedCredentials.ts';
import { sealingAad } from '../../schemas/secrets/sealed.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { keyIdOf, ramdiskAgentId } from '../../schemas/trust/agentIds.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { seal } from '../../services/secrets/sealing.ts';
import { agentAggregate } from '../../services/trust/agent/agent.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { streamMessages } from '../support/plaintextScan.ts';
import { startBrokerEngine } from './brokerEngineFixture.ts';

type Engine = Awaited<ReturnType<typeof startBrokerEngine>>;
type Joined = Awaited<ReturnType<Engine['joinAgent']>>;

let engine: Engine;
let victim: Joined;
let evilSite: Joined;
let tenantHost: Joined;

const keyOf = (agent: Joined) => Buffer.from(agent.identity.publicKeyRaw).toString('base64');
const registeredKey = async (agentId: string) => {
  const state = (await engine.bus.repository.load(agentAggregate, agentId)).state;
  return state.exists ? state.keyId : undefined;
};
/** The refusal code of a registration sent on the agent's own subject. */
const refusal = async (agent: Joined, registration: Parameters<typeof sendRegistration>[1]) =>
  sendRegistration(agent.nc, registration, { userPublicKey: agent.userPublicKey! }).then(
    () => 'registered',
    (err: unknown) => (err instanceof PlatformError ? err.code : String(err)),
  );
/** Events stored on an agent's subject, with the actor each was recorded under. */
const agentEvents = async (agentId: string) =>
  (await streamMessages(engine.nc, Streams.events.name))
    .filter((m) => m.subject === Subjects.aggregateEvents('trust', 'agent', agentId))
    .flatMap(
      (m) =>
        (JSON.parse(m.text.slice(m.text.indexOf('\n') + 1)) as { events: { type: string; data: { reason?: string }; metadata: { actor: string } }[] }).events,
    );

function publishDenied(nc: NatsConnection, subject: string): Promise<boolean> {
  const denied = (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'error' && s.error instanceof PermissionViolationError && s.error.subject === subject) return true;
    }
    return false;
  })();
  nc.publish(subject, JSON.stringify({ agentId: 'site-dc2', role: 'site', siteId: 'dc2', publicKey: keyOf(evilSite) }));
  return Promise.race([denied, new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))]);
}

beforeAll(async () => {
  engine = await startBrokerEngine();
  for (const siteId of ['dc1', 'dc2', 'evil']) await engine.send('site.create', { siteId, name: siteId }, `site-create-${siteId}`);
  for (const [nodeId, siteId] of [
    ['n1', 'dc1'],
    ['n2', 'dc1'],
    ['m1', 'dc2'],
  ] as const) {
    await engine.send(
      'metal.enroll',
      { ...enrollPayload(nodeId, siteId), bmc: { address: `https://127.0.0.1:8443/redfish/v1/Systems/${nodeId}`, credentialsRef: `secret:bmc-${nodeId}` } },
      `enroll-${nodeId}-0001`,
    );
  }
  const sealed = seal(JSON.stringify({ username: 'root', password: 'dc2-bmc-password' }), engine.masterKey, sealingAad('bmc-m1', 1));
  await engine.send('secrets.put', { secretId: 'bmc-m1', kind: 'bmc', version: 1, sealed }, 'secret-bmc-m1-0001');
  victim = await engine.joinAgent('site', 'dc2');
  evilSite = await engine.joinAgent('site', 'evil');
  // A tenant is root on its installed host: it holds the host's node-agent credentials.
  tenantHost = await engine.joinAgent('node', 'dc1', 'n1');
}, 60_000);

afterAll(async () => {
  await engine?.[Symbol.asyncDispose]();
});

describe('agent registration under broker permissions', () => {
  it('any agent can register or replace any agent key (regression): the broker denies bc.cmd.agent.register and foreign registration subjects', async () => {
    for (const attacker of [evilSite, tenantHost]) {
      expect(await publishDenied(attacker.nc, Subjects.command('agent.register'))).toBe(true);
      expect(await publishDenied(attacker.nc, Subjects.agentRegistration('site-dc2', victim.userPublicKey!))).toBe(true);
      expect(await publishDenied(attacker.nc, Subjects.agentRegistration('site-dc2', 'anonymous'))).toBe(true);
    }
    expect(await registeredKey('site-dc2')).toBe(victim.identity.keyId);
  });

  it("refuses, on an agent's own subject, every agent id but its own with AGENT_IDENTITY_MISMATCH, audited on the asking agent's subject under its NATS identity", async () => {
    const attackerKey = keyOf(evilSite);
    const n2Ramdisk = ramdiskAgentId('n2', keyIdOf(attackerKey));
    const attempts = [
      { attacker: evilSite, registration: { agentId: 'site-dc2', role: 'site' as const, siteId: 'dc2', publicKey: attackerKey } },
      { attacker: tenantHost, registration: { agentId: 'site-dc1', role: 'site' as const, siteId: 'dc1', publicKey: attackerKey } },
      { attacker: tenantHost, registration: { agentId: n2Ramdisk, role: 'ramdisk' as const, siteId: 'dc1', nodeId: 'n2', publicKey: attackerKey } },
      { attacker: tenantHost, registration: { agentId: 'node-n2', role: 'node' as const, siteId: 'dc1', nodeId: 'n2', publicKey: attackerKey } },
      { attacker: evilSite, registration: { agentId: 'node-m1', role: 'node' as const, siteId: 'dc2', nodeId: 'm1', publicKey: attackerKey } },
    ];
    for (const { attacker, registration } of attempts) {
      // The request goes out on the attacker's own subject, the only registration subject its JWT may publish.
      const subject = Subjects.agentRegistration(attacker.agentId, attacker.userPublicKey!);
      const reply = await attacker.nc.request(subject, JSON.stringify(registration), { timeout: 5_000 });
      expect(reply.json()).toMatchObject({ ok: false, error: { code: 'AGENT_IDENTITY_MISMATCH' } });
      // Nothing lands on the agent it named: no credential writes another agent's history.
      expect((await agentEvents(registration.agentId)).filter((e) => e.type === 'AgentRegistrationRefused')).toEqual([]);
    }
    // Each attacker's first refusal is on its own subject, under its NATS identity (later ones in the window are counted).
    for (const attacker of [evilSite, tenantHost]) {
      const audit = (await agentEvents(attacker.agentId)).filter((e) => e.type === 'AgentRegistrationRefused');
      const role = attacker === evilSite ? 'site' : 'node';
      expect(audit).toEqual([
        expect.objectContaining({
          data: expect.objectContaining({ reason: 'AGENT_IDENTITY_MISMATCH' }),
          metadata: expect.objectContaining({ actor: `nats:${role}:${attacker.agentId}:${attacker.userPublicKey}` }),
        }),
      ]);
    }
    expect(await registeredKey('site-dc2')).toBe(victim.identity.keyId);
    expect(await registeredKey('site-dc1')).toBeUndefined();
    expect(await registeredKey('node-n2')).toBeUndefined();
    expect(await registeredKey(n2Ramdisk)).toBeUndefined();
  });

  it("a site agent of another site cannot get dc2's BMC password by posing as dc2 (regression): the grant is refused as forged", async () => {
    const posing = { agentId: 'site-dc2', identity: evilSite.identity };
    const code = await requestSecretGrant(evilSite.nc, posing, { ref: 'secret:bmc-m1', nodeId: 'm1' }).then(
      () => 'granted',
      (err: unknown) => (err as PlatformError).code,
    );
    expect(code).toBe('GRANT_FORGED');
    // The real dc2 agent still gets it: nothing about it changed.
    const granted = await requestSecretGrant(victim.nc, { agentId: 'site-dc2', identity: victim.identity }, { ref: 'secret:bmc-m1', nodeId: 'm1' });
    expect(JSON.parse(granted.value.toString())).toMatchObject({ password: 'dc2-bmc-password' });
  });

  it('replaces its own key only with the registered key signature (AGENT_KEY_UNPROVEN otherwise, audited)', async () => {
    // A host whose first refusal this is: it is recorded, not only counted.
    const host = await engine.joinAgent('node', 'dc1', 'n2');
    const next = loadOrCreateIdentity(`${engine.dataDir}/rotation-next`);
    const rotation = { agentId: 'node-n2', role: 'node' as const, siteId: 'dc1', nodeId: 'n2', publicKey: next.publicKeyBase64 };
    expect(await refusal(host, rotation)).toBe('AGENT_KEY_UNPROVEN');
    expect((await agentEvents('node-n2')).at(-1)).toMatchObject({
      type: 'AgentRegistrationRefused',
      data: { reason: 'AGENT_KEY_UNPROVEN' },
      metadata: { actor: `nats:node:node-n2:${host.userPublicKey}` },
    });
    expect(await registeredKey('node-n2')).toBe(host.identity.keyId);

    expect(await refusal(host, { ...rotation, rotationSignature: rotationSignature('node-n2', host.identity, next) })).toBe('registered');
    expect(await registeredKey('node-n2')).toBe(next.keyId);
  });

  it('a real agent re-joining after its key changed was deduplicated by agent-register-<keyId> (regression): a re-join always ends with its key registered', async () => {
    const original = loadOrCreateIdentity(`${engine.dataDir}/dc1-site-key`);
    const site = await engine.joinAgent('site', 'dc1', undefined, original);
    expect(await registeredKey('site-dc1')).toBe(original.keyId);
    // The key moves on (here legitimately, with the registered key's signature).
    const other = loadOrCreateIdentity(`${engine.dataDir}/dc1-site-key-2`);
    const signature = rotationSignature('site-dc1', original, other);
    expect(await refusal(site, { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey: other.publicKeyBase64, rotationSignature: signature })).toBe(
      'registered',
    );
    expect(await registeredKey('site-dc1')).toBe(other.keyId);
    // The agent that holds the original key joins again with a fresh token: its key is the registered one again.
    await engine.joinAgent('site', 'dc1', undefined, original);
    expect(await registeredKey('site-dc1')).toBe(original.keyId);
    const rotations = (await agentEvents('site-dc1')).filter((e) => e.type === 'AgentKeyRotated');
    expect(rotations.at(-1)!.metadata.actor).toMatch(/^join:site-dc1:jt-/);
  });
});
