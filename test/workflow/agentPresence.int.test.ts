import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { signAgentHeartbeat, type AgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { keyIdOf } from '../../schemas/trust/agentIds.ts';
import type { AgentState } from '../../schemas/trust/agentState.ts';
import { startAgentPresence } from '../../services/agents/agentPresence.ts';
import type { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startTestNats } from '../support/natsServer.ts';

function agent(agentId: string, role: 'site' | 'ramdisk' | 'node', nodeId: string | null) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicKeyRaw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const publicKeyBase64 = publicKeyRaw.toString('base64');
  const state: AgentState = {
    exists: true,
    agentId,
    role,
    siteId: 'dc1',
    nodeId,
    publicKey: publicKeyBase64,
    keyId: keyIdOf(publicKeyBase64),
    joinTokenIds: [],
  };
  return { agentId, state, signer: { privateKey, publicKeyRaw } };
}

const host = agent('node-n1', 'node', 'n1');
// A tenant is root on its own host n2: it holds n2's agent key (and, under broker auth, n2's heartbeat subject).
const tenantHost = agent('node-n2', 'node', 'n2');
const siteAgent = agent('site-dc1', 'site', null);
const registered = new Map([host, tenantHost, siteAgent].map((a) => [a.agentId, a.state]));

const WINDOW_MS = 600;

async function presenceFixture(onVerified?: (heartbeat: AgentHeartbeat) => void) {
  const nats = await startTestNats();
  const nc = await connectNats(nats.url, 'api');
  const beats = await connectNats(nats.url, 'agents');
  let reads = 0;
  const repository = {
    load: async (_aggregate: unknown, id: string) => (reads++, { state: registered.get(id) ?? { exists: false } }),
  } as unknown as AggregateRepository;
  const presence = startAgentPresence(nc, { repository, windowMs: WINDOW_MS, log: createLogger('test', 'silent'), ...(onVerified ? { onVerified } : {}) });
  // The subscription reaches the server with the connection's next flush; a heartbeat sent before it is not heard.
  await nc.flush();
  return {
    presence,
    beats,
    reads: () => reads,
    async [Symbol.asyncDispose]() {
      await presence.stop();
      await beats.close();
      await nc.close();
      await nats[Symbol.asyncDispose]();
    },
  };
}

/** `signer` says "alive" as `claim`, on the subject of node `onNode`. */
function beat(
  nc: NatsConnection,
  signer: ReturnType<typeof agent>['signer'],
  claim: Partial<AgentHeartbeat> & { agentId: string },
  onNode = claim.nodeId ?? 'n1',
) {
  const heartbeat: AgentHeartbeat = { siteId: 'dc1', nodeId: 'n1', sentAt: new Date().toISOString(), ...claim };
  nc.publish(Subjects.agentHeartbeat('dc1', onNode), JSON.stringify(signAgentHeartbeat(heartbeat, signer)));
}

describe('agent presence', () => {
  it("counts a node's own agent while it beats, and drops it from the window by the clock alone once it stops", async () => {
    await using env = await presenceFixture();
    // Beating as an agent does, so a loaded machine that reads the view late still finds it inside the window.
    const beating = setInterval(() => beat(env.beats, host.signer, { agentId: host.agentId, startedAt: '2026-01-01T00:00:00.000Z' }), 100);
    try {
      await expect.poll(() => env.presence.presenceOf('n1')?.alive, { timeout: 5_000, interval: 20 }).toBe(true);
    } finally {
      clearInterval(beating);
    }
    expect(env.presence.presenceOf('n1')!.presence).toMatchObject({ agentId: 'node-n1', role: 'node', startedAt: '2026-01-01T00:00:00.000Z', lastError: null });
    await env.beats.flush();
    await sleep(WINDOW_MS + 100);
    expect(env.presence.presenceOf('n1')).toMatchObject({ alive: false, presence: { agentId: 'node-n1' } });
  });

  it("regression (a host's drivers and instances vanished while it ran a command): a command heartbeat keeps what the agent's last presence heartbeat reported, and is no report", async () => {
    const reports: AgentHeartbeat[] = [];
    await using env = await presenceFixture((heartbeat) => reports.push(heartbeat));
    const drivers = [{ id: 'hello-vm', version: '1.0.0', kinds: ['runtime' as const] }];
    const instances = [{ id: 'vm-1', runtime: 'hello-vm', desiredState: 'running' as const, state: 'running' as const, addresses: ['127.0.0.1'] }];
    beat(env.beats, host.signer, { agentId: host.agentId, startedAt: '2026-01-01T00:00:00.000Z', drivers, instances });
    await expect.poll(() => env.presence.presenceOf('n1')?.presence.drivers, { timeout: 5_000, interval: 20 }).toEqual(drivers);
    const before = env.presence.presenceOf('n1')!.presence.heardAt;
    await sleep(20);
    beat(env.beats, host.signer, { agentId: host.agentId, commandId: 'instance-remove-vm-1' });
    await expect.poll(() => env.presence.presenceOf('n1')?.presence.heardAt, { timeout: 5_000, interval: 20 }).not.toBe(before);
    expect(env.presence.presenceOf('n1')).toMatchObject({
      alive: true,
      presence: { agentId: 'node-n1', startedAt: '2026-01-01T00:00:00.000Z', drivers, instances },
    });
    expect(reports.map((r) => r.commandId)).toEqual([undefined]);
  });

  it('reads a key once, then verifies each heartbeat against it as it arrives', async () => {
    await using env = await presenceFixture();
    for (let i = 0; i < 5; i++) {
      beat(env.beats, host.signer, { agentId: host.agentId });
      await sleep(30);
    }
    await expect.poll(() => env.presence.presenceOf('n1')?.alive, { timeout: 5_000, interval: 20 }).toBe(true);
    await env.presence.settled();
    expect(env.reads()).toBe(1);
  });

  it('never counts a heartbeat for n1 that the tenant of n2, a site agent or a stranger sends', async () => {
    await using env = await presenceFixture();
    const stranger = agent('node-n1', 'node', 'n1');
    // The tenant's own key, naming n1: on n2's subject (all the broker lets it use) and, without a broker, on n1's.
    beat(env.beats, tenantHost.signer, { agentId: tenantHost.agentId, nodeId: 'n1' }, 'n2');
    beat(env.beats, tenantHost.signer, { agentId: tenantHost.agentId, nodeId: 'n1' }, 'n1');
    // n1's agent id, signed with the tenant's key, on the tenant's subject.
    beat(env.beats, tenantHost.signer, { agentId: host.agentId, nodeId: 'n2' }, 'n2');
    beat(env.beats, siteAgent.signer, { agentId: siteAgent.agentId });
    beat(env.beats, stranger.signer, { agentId: host.agentId });
    await sleep(300);
    await env.presence.settled();
    expect(env.presence.presenceOf('n1')).toBeUndefined();
    expect(env.presence.presenceOf('n2')).toBeUndefined();

    // A flood of forgeries does not push a valid heartbeat out.
    beat(env.beats, host.signer, { agentId: host.agentId });
    for (let i = 0; i < 50; i++) beat(env.beats, stranger.signer, { agentId: host.agentId });
    await expect.poll(() => env.presence.presenceOf('n1')?.alive, { timeout: 5_000, interval: 20 }).toBe(true);
  });
});
