import { createHash, generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import { readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { AgentKeyring } from '../../daemon/agent/agentKeyring.ts';
import type { ExecutionContext } from '../../daemon/agent/commandRunner.ts';
import { agentErrorCodeOf } from '../../daemon/agent/errors.ts';
import { identityOf } from '../../daemon/agent/identity.ts';
import { startPresenceHeartbeats } from '../../daemon/agent/presenceHeartbeats.ts';
import { fitReports, moduleReporter, MODULES_HEARTBEAT_BUDGET } from '../../daemon/node/modules/moduleState.ts';
import { nodeExecutor } from '../../daemon/node/nodeAgent.ts';
import { ramdiskExecutor } from '../../daemon/ramdisk/ramdiskExecutor.ts';
import { AgentCommandParams, type AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { AgentHeartbeat, signAgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { AgentState } from '../../schemas/trust/agentState.ts';
import { startAgentPresence } from '../../services/agents/agentPresence.ts';
import type { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startTestNats } from '../support/natsServer.ts';
import { hostFixture, moduleBundle } from './moduleSupport.ts';

const log = createLogger('modules-test', 'silent');
const ctx: ExecutionContext = { heartbeat: () => undefined, signal: new AbortController().signal };

function registered(agentId: string, nodeId: string) {
  const identity = new AgentKeyring(identityOf(generateKeyPairSync('ed25519').privateKey));
  const state: AgentState = {
    exists: true,
    agentId,
    role: 'node',
    siteId: 'dc1',
    nodeId,
    publicKey: identity.publicKeyBase64,
    keyId: identity.keyId,
    joinTokenIds: [],
  };
  return { identity, state };
}

const command = (kind: AgentCommand['kind'], params: Record<string, unknown>): AgentCommand => ({
  commandId: 'wf-s0-a1',
  kind,
  siteId: 'dc1',
  nodeId: 'n1',
  workflowId: 'wf',
  stepIndex: 0,
  attempt: 1,
  destructive: false,
  params,
  issuedAt: new Date().toISOString(),
  notAfter: new Date(Date.now() + 60_000).toISOString(),
  nonce: 'a'.repeat(22),
});

describe('modules in the heartbeat', () => {
  it("carries the host's modules in its signed heartbeat, presence keeps them, and a forged heartbeat's modules are ignored", async () => {
    using env = hostFixture();
    const v1 = moduleBundle('1.0.0');
    await env.host.apply(v1.params, v1.bundle);
    await using nats = await startTestNats();
    const nc = await connectNats(nats.url, 'api');
    const agents = await connectNats(nats.url, 'agents');
    const host = registered('node-n1', 'n1');
    const tenant = registered('node-n2', 'n2');
    const states = new Map([
      ['node-n1', host.state],
      ['node-n2', tenant.state],
    ]);
    const repository = { load: async (_a: unknown, id: string) => ({ state: states.get(id) ?? { exists: false } }) } as unknown as AggregateRepository;
    const presence = startAgentPresence(nc, { repository, windowMs: 5_000, log });
    await nc.flush();
    const beats = startPresenceHeartbeats(agents, {
      agentId: 'node-n1',
      siteId: 'dc1',
      nodeId: 'n1',
      identity: host.identity,
      startedAt: new Date(),
      lastError: () => undefined,
      modules: moduleReporter(env.stateDir, () => env.boot.id),
      intervalMs: 100,
    });
    const genuine = [{ name: 'resolver', version: '1.0.0', digest: v1.params.manifestSha256, state: 'active', probes: [{ name: 'runs', ok: true }] }];
    try {
      await expect.poll(() => presence.presenceOf('n1')?.presence.modules, { timeout: 5_000 }).toEqual(genuine);
      // A new version applied: the next beat says so.
      const v2 = moduleBundle('1.1.0');
      await env.host.apply(v2.params, v2.bundle);
      await expect.poll(() => presence.presenceOf('n1')?.presence.modules?.[0]?.version, { timeout: 5_000 }).toBe('1.1.0');
      beats.stop();
      await agents.flush();
      await sleep(150);
      const heardAt = presence.presenceOf('n1')!.presence.heardAt;
      // The tenant of n2 (its own registered key) and a stranger claim n1 runs a module it does not.
      const forged = [{ name: 'backdoor', version: '6.6.6', digest: 'f'.repeat(64), state: 'active' as const, probes: [] }];
      const stranger = registered('node-n1', 'n1');
      for (const signer of [tenant.identity, stranger.identity]) {
        const heartbeat = {
          agentId: signer === tenant.identity ? 'node-n2' : 'node-n1',
          siteId: 'dc1',
          nodeId: 'n1',
          sentAt: new Date().toISOString(),
          modules: forged,
        };
        agents.publish(Subjects.agentHeartbeat('dc1', 'n1'), JSON.stringify(signAgentHeartbeat(heartbeat, signer)));
      }
      await agents.flush();
      await sleep(300);
      await presence.settled();
      expect(presence.presenceOf('n1')!.presence).toMatchObject({ heardAt, modules: [{ name: 'resolver', version: '1.1.0' }] });
    } finally {
      beats.stop();
      await presence.stop();
      await agents.close();
      await nc.close();
    }
  });

  it('re-reads the module folders only when they change', async () => {
    using env = hostFixture();
    const report = moduleReporter(env.stateDir, () => env.boot.id);
    expect(report()).toEqual([]);
    const v1 = moduleBundle('1.0.0');
    await env.host.apply(v1.params, v1.bundle);
    const first = report();
    expect(first).toMatchObject([{ name: 'resolver', version: '1.0.0' }]);
    expect(report()).toBe(first);
    const v2 = moduleBundle('1.1.0');
    await env.host.apply(v2.params, v2.bundle);
    expect(report()).toMatchObject([{ version: '1.1.0' }]);
  });
});

describe('module.apply through the node executor', () => {
  it('fetches the bundle by URL, checks its sha256, applies it; the ramdisk refuses module kinds', async () => {
    using env = hostFixture();
    const v1 = moduleBundle('1.0.0');
    const server = createServer((req, res) => void (req.url === '/b' ? res.writeHead(200).end(v1.bundle) : res.writeHead(404).end()));
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/b`;
    try {
      const executor = nodeExecutor({ siteId: 'dc1', nodeId: 'n1', disks: [], modules: env.host });
      const sha = createHash('sha256').update(v1.bundle).digest('hex');
      const good = command('module.apply', { ...v1.params, bundleUrl: url, bundleSha256: sha });
      expect(executor.refuse(good)).toBeUndefined();
      const wrongSha = { ...v1.params, bundleUrl: url, bundleSha256: 'e'.repeat(64) };
      expect(await executor.execute(good, AgentCommandParams['module.apply'].parse(wrongSha), ctx).catch(agentErrorCodeOf)).toBe('IMAGE_CHECKSUM_MISMATCH');
      const result = await executor.execute(good, AgentCommandParams['module.apply'].parse(good.params), ctx);
      expect(result).toMatchObject({ module: 'resolver', version: '1.0.0', changed: true, state: 'active' });
      expect(readlinkSync(join(env.modules, 'resolver/current'))).toBe('1.0.0');
      expect(nodeExecutor({ siteId: 'dc1', nodeId: 'n1', disks: [] }).refuse(good)).toMatch(/keeps no modules/);
      expect(ramdiskExecutor({ siteId: 'dc1', nodeId: 'n1', disks: [] }).refuse(good)).toMatch(/installed host/);
    } finally {
      server.close();
    }
  });
});

describe('modules fit a node agent heartbeat', () => {
  it('keeps 256 modules of 32 probes each under the budget, failed probes listed and the passing ones summarised', () => {
    const long = (i: number) => `p${String(i).padStart(62, '0')}`;
    const reports = Array.from({ length: 256 }, (_, m) => ({
      name: `m${String(m).padStart(62, '0')}`,
      version: '1.0.0-rc.1',
      digest: 'a'.repeat(64),
      state: m === 7 ? ('failed' as const) : ('active' as const),
      probes: Array.from({ length: 32 }, (_, i) => ({ name: long(i), ok: !(m === 7 && i === 3) })),
    }));
    const fitted = fitReports(reports);
    expect(Buffer.byteLength(JSON.stringify(fitted))).toBeLessThanOrEqual(MODULES_HEARTBEAT_BUDGET);
    expect(fitted).toHaveLength(256);
    expect(fitted[7]).toMatchObject({ state: 'failed', probes: [{ name: long(3), ok: false }], passed: { count: 31 } });
    expect(fitted[8]).toMatchObject({ probes: [], passed: { count: 32 } });
    // Every probe failing everywhere: the list is cut rather than the heartbeat refused by the broker.
    const allFailing = reports.map((r) => ({ ...r, state: 'failed' as const, probes: r.probes.map((p) => ({ ...p, ok: false })) }));
    const cut = fitReports(allFailing);
    expect(Buffer.byteLength(JSON.stringify(cut))).toBeLessThanOrEqual(MODULES_HEARTBEAT_BUDGET);
    expect(cut.length).toBeGreaterThan(0);
    expect(cut).toEqual(allFailing.slice(0, cut.length));
    // Signed, as the agent sends it: under the node agent's 128 KiB message limit.
    for (const modules of [fitted, cut]) {
      const heartbeat = AgentHeartbeat.parse({ agentId: 'node-n1', siteId: 'dc1', nodeId: 'n1', sentAt: new Date().toISOString(), modules });
      const signer = registered('node-n1', 'n1').identity;
      expect(Buffer.byteLength(JSON.stringify(signAgentHeartbeat(heartbeat, signer)))).toBeLessThan(128 * 1024);
    }
    const small = reports.slice(0, 2);
    expect(fitReports(small)).toEqual(small);
  });
});
