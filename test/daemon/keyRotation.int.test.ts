import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { identityKeyFile, identityOf, writeKeyFile } from '../../daemon/agent/identity.ts';
import { pendingKeyFile } from '../../daemon/agent/keyRotation.ts';
import { rotationSignature, sendRegistration } from '../../daemon/agent/registration.ts';
import { startSiteAgent, type SiteAgent } from '../../daemon/site/siteAgent.ts';
import { startBmcSimulator } from '../../daemon/simulator/bmc/index.ts';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { verifiedResult } from '../../services/agents/agentExchange.ts';
import { agentAggregate } from '../../services/trust/agent/agent.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { startControlPlaneResultIntake } from '../../services/agents/resultIntake.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { agentCommand } from './harness.ts';

const PASSWORD = 'rotate-Secret-42';

/** A backbone with the join process's registration and key-status service, the result intake, a BMC, and a `bcd site` that asks often. */
async function startRotationRig() {
  const env = await startBackbone({ projectors: false });
  const registrations = startRegistrationService(env.nc, env.store, env.log, { bus: env.bus });
  const intake = await startControlPlaneResultIntake(env.nc, { repository: env.bus.repository, bus: env.bus, log: env.log });
  const bmc = await startBmcSimulator({ tree: 'hpe-ilo5-dl325', username: 'admin', password: PASSWORD, powerDelayMs: 0, mediaDelayMs: 0 });
  const stateDir = join(env.dataDir, 'site');
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(join(stateDir, 'credentials.json'), JSON.stringify({ 'secret:n1-bmc': { username: 'admin', password: PASSWORD } }));
  const start = () =>
    startSiteAgent(env.nc, {
      siteId: 'dc1',
      stateDir,
      natsUrl: env.nats.url,
      credentials: { labFile: join(stateDir, 'credentials.json') },
      redfish: { auth: 'basic', timeoutMs: 3_000, timing: { pollIntervalMs: 5, powerTimeoutMs: 3_000, mediaTimeoutMs: 3_000 } },
      keyCheckIntervalMs: 100,
      log: env.log,
    });
  const jsm = await jetstreamManager(env.nc);
  /** Sends `power.get` to the agent and resolves the signed result it stored. */
  const ask = async (): Promise<{ command: AgentCommand; bytes: Uint8Array }> => {
    const command = agentCommand('power.get', { bmc: { address: bmc.url, credentialsRef: 'secret:n1-bmc' } });
    await jetstream(env.nc).publish(Subjects.siteAgentCommands('dc1', 'n1'), JSON.stringify(command), { msgID: command.commandId });
    const subject = Subjects.acceptedAgentResult('dc1', 'n1', command.commandId, command.nonce);
    let stored = null;
    await expect
      .poll(async () => (stored = await jsm.direct.getMessage(Streams.agentResults.name, { last_by_subj: subject })), { timeout: 15_000 })
      .not.toBeNull();
    return { command, bytes: stored!.data };
  };
  const verify = (r: { command: AgentCommand; bytes: Uint8Array }) => verifiedResult({ repository: env.bus.repository }, r.command, r.bytes);
  const agentState = async () => (await env.bus.repository.load(agentAggregate, 'site-dc1')).state;
  const disposeBackbone = env[Symbol.asyncDispose].bind(env);
  return Object.assign(env, {
    stateDir,
    start,
    ask,
    verify,
    agentState,
    async [Symbol.asyncDispose]() {
      await registrations.stop();
      await intake.stop();
      await bmc.close();
      await disposeBackbone();
    },
  });
}

const keyFileId = (file: string) => identityOf(createPrivateKey(readFileSync(file))).keyId;

describe('bcd site key rotation', () => {
  it('rotates when the control plane asks: the next result verifies with the new key, the old key is refused', { timeout: 90_000 }, async () => {
    await using rig = await startRotationRig();
    const agent: SiteAgent = await rig.start();
    try {
      await agent.registered;
      const oldKeyId = agent.keyId;
      const oldKey = identityOf(createPrivateKey(readFileSync(identityKeyFile(rig.stateDir))));
      const before = await rig.ask();
      expect(await rig.verify(before)).toMatchObject({ ok: true, agentId: 'site-dc1' });

      await rig.bus.execute({ name: 'agent.rotateKey', payload: { agentId: 'site-dc1', reason: 'key age' }, actor: 'operator:test' });
      await expect.poll(() => agent.keyId, { timeout: 15_000 }).not.toBe(oldKeyId);

      // The control plane recorded it and the request is settled; the key file holds the new key, private to the agent.
      expect(await rig.agentState()).toMatchObject({ keyId: agent.keyId, rotationRequestedFor: null });
      const events = [];
      for await (const b of rig.store.readAfter('bc.evt.trust.agent.site-dc1', 0)) events.push(...b.batch.events);
      expect(events.map((e) => e.type)).toEqual(['AgentRegistered', 'AgentKeyRotationRequested', 'AgentKeyRotated']);
      expect(events[2]!.data).toMatchObject({ previousKeyId: oldKeyId, keyId: agent.keyId });
      expect(keyFileId(identityKeyFile(rig.stateDir))).toBe(agent.keyId);
      expect(statSync(identityKeyFile(rig.stateDir)).mode & 0o777).toBe(0o600);
      expect(existsSync(pendingKeyFile(rig.stateDir))).toBe(false);

      // Its next result verifies with the new key; the same result signed by the old key is refused as forged.
      const after = await rig.ask();
      expect(await rig.verify(after)).toMatchObject({ ok: true, agentId: 'site-dc1' });
      const byOldKey = { command: after.command, bytes: signAgentResult(decodeSignedResult(after.bytes).result, oldKey) };
      await expect(rig.verify(byOldKey)).rejects.toMatchObject({ code: 'AGENT_RESULT_REJECTED', reason: 'FORGED' });
      await expect(rig.verify(before)).rejects.toMatchObject({ reason: 'FORGED' });
    } finally {
      await agent.stop();
    }
  });

  it('refuses a rotation signed by any key but the registered one (AGENT_KEY_UNPROVEN), and the key stays', { timeout: 60_000 }, async () => {
    await using rig = await startRotationRig();
    const agent = await rig.start();
    try {
      await agent.registered;
      const registered = agent.keyId;
      const intruder = identityOf(generateKeyPairSync('ed25519').privateKey);
      const next = identityOf(generateKeyPairSync('ed25519').privateKey);
      const forged = { agentId: 'site-dc1', role: 'site' as const, siteId: 'dc1', publicKey: next.publicKeyBase64 };
      // Signed by another key, and (a replay) signed by the right key name but over another key.
      for (const rotationSig of [rotationSignature('site-dc1', { ...intruder, keyId: registered }, next), rotationSignature('site-dc1', intruder, next)]) {
        await expect(sendRegistration(rig.nc, { ...forged, rotationSignature: rotationSig })).rejects.toMatchObject({ code: 'AGENT_KEY_UNPROVEN' });
      }
      expect(await rig.agentState()).toMatchObject({ keyId: registered });
      expect(await rig.verify(await rig.ask())).toMatchObject({ ok: true });
    } finally {
      await agent.stop();
    }
  });

  it('a crash between the control plane accepting the new key and the agent storing it does not lock the agent out', { timeout: 60_000 }, async () => {
    await using rig = await startRotationRig();
    const first = await rig.start();
    await first.registered;
    const old = identityOf(createPrivateKey(readFileSync(identityKeyFile(rig.stateDir))));
    await first.stop();
    // What a crash leaves: the new key waiting in identity.key.next, the control plane already switched to it, the
    // key file still the old one.
    const next = identityOf(generateKeyPairSync('ed25519').privateKey);
    writeKeyFile(pendingKeyFile(rig.stateDir), next.privateKey);
    await sendRegistration(rig.nc, {
      agentId: 'site-dc1',
      role: 'site',
      siteId: 'dc1',
      publicKey: next.publicKeyBase64,
      rotationSignature: rotationSignature('site-dc1', old, next),
    });
    expect(await rig.agentState()).toMatchObject({ keyId: next.keyId });

    const restarted = await rig.start();
    try {
      await restarted.registered;
      expect(restarted.keyId).toBe(next.keyId);
      expect(keyFileId(identityKeyFile(rig.stateDir))).toBe(next.keyId);
      expect(existsSync(pendingKeyFile(rig.stateDir))).toBe(false);
      expect(await rig.verify(await rig.ask())).toMatchObject({ ok: true, agentId: 'site-dc1' });
    } finally {
      await restarted.stop();
    }
  });

  it('a crash before the rotation reached the control plane finishes it at the next start with the kept new key', { timeout: 60_000 }, async () => {
    await using rig = await startRotationRig();
    const first = await rig.start();
    await first.registered;
    const old = first.keyId;
    await first.stop();
    const next = identityOf(generateKeyPairSync('ed25519').privateKey);
    writeKeyFile(pendingKeyFile(rig.stateDir), next.privateKey);

    const restarted = await rig.start();
    try {
      await restarted.registered;
      expect(restarted.keyId).toBe(next.keyId);
      expect(await rig.agentState()).toMatchObject({ keyId: next.keyId });
      const rotated = [];
      for await (const b of rig.store.readAfter('bc.evt.trust.agent.site-dc1', 0)) rotated.push(...b.batch.events.filter((e) => e.type === 'AgentKeyRotated'));
      expect(rotated.map((e) => (e.data as { previousKeyId: string }).previousKeyId)).toEqual([old]);
      expect(await rig.verify(await rig.ask())).toMatchObject({ ok: true });
    } finally {
      await restarted.stop();
    }
  });
});
