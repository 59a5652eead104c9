import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandJournal } from '../../daemon/agent/journal.ts';
import { startSiteAgent, type SiteAgent } from '../../daemon/site/siteAgent.ts';
import { startBmcSimulator, type BmcSimulator } from '../../daemon/simulator/bmc/index.ts';
import { decodeSignedResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { agentCommand, log, startAgentBackbone } from './harness.ts';

const PASSWORD = 'site-agent-Secret-42';

describe('bcd site', () => {
  let env: Awaited<ReturnType<typeof startAgentBackbone>>;
  let bmc: BmcSimulator;
  let agent: SiteAgent;
  let stateDir: string;
  const bmcRef = () => ({ address: bmc.url, credentialsRef: 'secret:n1-bmc' });
  const resets = () => bmc.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('ComputerSystem.Reset')).length;
  const start = () =>
    startSiteAgent(env.nc, {
      siteId: 'dc1',
      stateDir,
      natsUrl: env.nats.url,
      credentials: { labFile: join(stateDir, 'credentials.json') },
      redfish: { auth: 'basic', timeoutMs: 3_000, timing: { pollIntervalMs: 5, powerTimeoutMs: 3_000, mediaTimeoutMs: 3_000 } },
      log,
    });
  /** Waits until the site consumer has nothing pending or unacked: every delivery was handled. */
  const drained = async () => {
    await expect
      .poll(
        async () => {
          const info = await env.jsm.consumers.info(Streams.agentCommands.name, 'site_dc1');
          return info.num_pending + info.num_ack_pending;
        },
        { timeout: 10_000 },
      )
      .toBe(0);
  };

  beforeAll(async () => {
    env = await startAgentBackbone();
    stateDir = join(env.dir, 'site');
    bmc = await startBmcSimulator({ tree: 'hpe-ilo5-dl325', username: 'admin', password: PASSWORD, powerDelayMs: 20, mediaDelayMs: 20 });
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(join(stateDir, 'credentials.json'), JSON.stringify({ 'secret:n1-bmc': { username: 'admin', password: PASSWORD } }));
    agent = await start();
    await agent.registered;
  });
  afterAll(async () => {
    await agent?.stop();
    await bmc?.close();
    await env?.[Symbol.asyncDispose]();
  });

  it('registers its Ed25519 key as site-<siteId>', () => {
    expect(env.registrations).toContainEqual({ agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey: agent.publicKey });
    expect(Buffer.from(agent.publicKey, 'base64')).toHaveLength(32);
  });

  it('executes power.set and publishes a verifiable signed result', async () => {
    const cmd = agentCommand('power.set', { params: { action: 'off' }, bmc: bmcRef() });
    await env.publish(cmd);
    const verdict = await env.result(cmd);
    expect(verdict).toMatchObject({ ok: true, result: { ok: true, agentId: 'site-dc1', payload: { action: 'off', after: 'Off' } } });
    expect(bmc.state.powerState).toBe('Off');
  });

  it('executes boot.setOnce, media.insert, media.eject and inventory.read through Redfish', async () => {
    const boot = agentCommand('boot.setOnce', { params: { target: 'Pxe' }, bmc: bmcRef() });
    await env.publish(boot);
    expect(await env.result(boot)).toMatchObject({ ok: true, result: { ok: true, payload: { target: 'Pxe' } } });
    expect(bmc.state.bootOverride).toEqual({ target: 'Pxe', enabled: 'Once' });

    const insert = agentCommand('media.insert', { params: { imageUrl: 'http://127.0.0.1:9/installer.iso' }, bmc: bmcRef() });
    await env.publish(insert);
    expect(await env.result(insert)).toMatchObject({ ok: true, result: { ok: true, payload: { changed: true } } });
    const eject = agentCommand('media.eject', { bmc: bmcRef() });
    await env.publish(eject);
    expect(await env.result(eject)).toMatchObject({ ok: true, result: { ok: true, payload: { changed: true } } });

    const inventory = agentCommand('inventory.read', { bmc: bmcRef() });
    await env.publish(inventory);
    const verdict = await env.result(inventory);
    expect(verdict.ok && (verdict.result.payload as { nics: unknown[] }).nics.length).toBeGreaterThan(0);
  });

  it('executes firmware.update and reports the BMC task', async () => {
    const cmd = agentCommand('firmware.update', { params: { imageUrl: 'http://127.0.0.1:9/bios.bin' }, bmc: bmcRef() });
    await env.publish(cmd);
    expect(await env.result(cmd)).toMatchObject({ ok: true, result: { ok: true, payload: { taskUri: expect.any(String) } } });
    expect(bmc.state.appliedFirmware).toContain('http://127.0.0.1:9/bios.bin');
  });

  it('never puts the BMC password in a result', async () => {
    const cmd = agentCommand('power.set', { params: { action: 'softOff' }, bmc: { address: bmc.url, credentialsRef: 'secret:nope' } });
    await env.publish(cmd);
    expect(await env.result(cmd)).toMatchObject({ ok: true, result: { ok: false, errorCode: 'CREDENTIALS_MISSING' } });
    const msgs = await env.jsm.streams.info(Streams.agentResults.name);
    for (let seq = msgs.state.first_seq; seq <= msgs.state.last_seq; seq++) {
      const m = await env.jsm.direct.getMessage(Streams.agentResults.name, { seq });
      if (m) expect(Buffer.from(m.data).includes(PASSWORD)).toBe(false);
    }
  });

  it('executes a redelivered destructive command at most once', async () => {
    const cmd = agentCommand('power.set', { params: { action: 'cycle' }, bmc: bmcRef() });
    const before = resets();
    await env.publish(cmd);
    const first = await env.result(cmd);
    await env.publish(cmd, `${cmd.commandId}-redelivered`);
    await drained();
    expect(first).toMatchObject({ ok: true, result: { ok: true } });
    expect(resets() - before).toBe(1);
    expect(await env.resultCount(cmd)).toBe(1);
  });

  it('answers INTERRUPTED for a destructive command started before a crash, without touching the BMC', async () => {
    const cmd = agentCommand('power.set', { params: { action: 'cycle' }, bmc: bmcRef() });
    const crashed = new CommandJournal(stateDir);
    crashed.started(cmd.commandId, cmd.kind, true);
    crashed.close();
    const before = resets();
    await env.publish(cmd);
    expect(await env.result(cmd)).toMatchObject({ ok: true, result: { ok: false, errorCode: 'INTERRUPTED' } });
    await drained();
    expect(resets()).toBe(before);
  });

  it('answers EXPIRED for a command past notAfter and does not execute it', async () => {
    const cmd = agentCommand('power.set', { params: { action: 'cycle' }, bmc: bmcRef(), notAfter: new Date(Date.now() - 1_000).toISOString() });
    const before = resets();
    await env.publish(cmd);
    expect(await env.result(cmd)).toMatchObject({ ok: true, result: { ok: false, errorCode: 'EXPIRED' } });
    expect(resets()).toBe(before);
  });

  it('keeps its identity and journal across a restart: a finished command is re-published, not re-run', async () => {
    const cmd = agentCommand('power.set', { params: { action: 'cycle' }, bmc: bmcRef() });
    await env.publish(cmd);
    await env.result(cmd);
    const keyId = agent.keyId;
    await agent.stop();
    agent = await start();
    expect(agent.keyId).toBe(keyId);
    const before = resets();
    await env.publish(cmd, `${cmd.commandId}-after-restart`);
    await drained();
    await sleep(50);
    expect(resets()).toBe(before);
    const stored = await env.jsm.direct.getMessage(Streams.agentResults.name, {
      last_by_subj: Subjects.acceptedAgentResult('dc1', 'n1', cmd.commandId, cmd.nonce),
    });
    expect(decodeSignedResult(stored!.data).result.ok).toBe(true);
  });

  it('heartbeats a BMC operation longer than ack_wait instead of letting it be redelivered', async () => {
    const slow = await startBmcSimulator({ tree: 'dmtf-public-tower', username: 'admin', password: PASSWORD, powerDelayMs: 2_500 });
    const dir = join(env.dir, 'site-dc2');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'credentials.json'), JSON.stringify({ 'secret:slow': { username: 'admin', password: PASSWORD } }));
    const dc2 = await startSiteAgent(env.nc, {
      siteId: 'dc2',
      stateDir: dir,
      natsUrl: env.nats.url,
      credentials: { labFile: join(dir, 'credentials.json') },
      ackWaitMs: 1_000,
      redfish: { auth: 'basic', timing: { pollIntervalMs: 20 } },
      log,
    });
    try {
      const cmd = agentCommand('power.set', { siteId: 'dc2', params: { action: 'off' }, bmc: { address: slow.url, credentialsRef: 'secret:slow' } });
      const started = Date.now();
      await env.publish(cmd);
      expect(await env.result(cmd)).toMatchObject({ ok: true, result: { ok: true, payload: { after: 'Off' } } });
      expect(Date.now() - started).toBeGreaterThan(2_000);
      await dc2.idle();
      const info = await env.jsm.consumers.info(Streams.agentCommands.name, 'site_dc2');
      // One delivery in all: the consumer sequence counts redeliveries too.
      expect(info.delivered.consumer_seq).toBe(1);
      expect(slow.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('ComputerSystem.Reset'))).toHaveLength(1);
    } finally {
      await dc2.stop();
      await slow.close();
    }
  });
});
