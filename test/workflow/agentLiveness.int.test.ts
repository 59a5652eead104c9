import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { signAgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import { keyIdOf } from '../../schemas/trust/agentIds.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import type { ConnectionState } from '../../services/platform/nats/connectionState.ts';
import type { AgentState } from '../../services/trust/agent/agent.ts';
import { startAgentLiveness } from '../../services/agents/agentLiveness.ts';
import { startTestNats } from '../support/natsServer.ts';

const TIMEOUT_MS = 800;

function agent(agentId: string, role: 'site' | 'ramdisk', nodeId: string | null) {
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
  return { state, signer: { privateKey, publicKeyRaw } };
}

const ramdisk = agent('ramdisk-n1-aaaaaaaa', 'ramdisk', 'n1');
const otherNode = agent('ramdisk-n2-bbbbbbbb', 'ramdisk', 'n2');
const siteAgent = agent('site-dc1', 'site', null);
const registered = new Map([ramdisk, otherNode, siteAgent].map((a) => [a.state.exists ? a.state.agentId : '', a.state]));
/** The registered keys, as the agent aggregate would load them. */
const repository = {
  judged: async (_aggregate: unknown, id: string, judge: (state: unknown) => unknown) => judge({ state: registered.get(id) ?? { exists: false } }),
} as unknown as AggregateRepository;

const command = { commandId: 'wf-0123456789ab-s3-a1', kind: 'image.write', siteId: 'dc1', nodeId: 'n1' } as AgentCommand;

/** A heartbeat of `command` signed by the node's registered ramdisk. */
const beatOfRamdisk = (nc: NatsConnection) =>
  nc.publish(
    Subjects.agentHeartbeat('dc1', 'n1'),
    JSON.stringify(
      signAgentHeartbeat(
        {
          agentId: ramdisk.state.exists ? ramdisk.state.agentId : '',
          siteId: 'dc1',
          nodeId: 'n1',
          commandId: command.commandId,
          sentAt: new Date().toISOString(),
        },
        ramdisk.signer,
      ),
    ),
  );

/** A nats-server, the executor's connection with liveness on it, and a connection for the agent's heartbeats. */
async function livenessFixture(options: { repository?: AggregateRepository; connection?: ConnectionState } = {}) {
  const nats = await startTestNats();
  const nc = await connectNats(nats.url, 'liveness-test');
  const beats = await connectNats(nats.url, 'ramdisk');
  const liveness = startAgentLiveness(nc, { repository, timeoutMs: TIMEOUT_MS, log: createLogger('test', 'silent'), ...options });
  return {
    liveness,
    beats,
    async [Symbol.asyncDispose]() {
      await liveness.stop();
      await beats.close();
      await nc.close();
      await nats[Symbol.asyncDispose]();
    },
  };
}

describe('agent liveness', () => {
  it('keeps a heartbeating ramdisk alive past the timeout and finds it lost once it falls silent', async () => {
    await using env = await livenessFixture();
    using check = env.liveness.follow(command);
    for (let i = 0; i < 8; i++) {
      beatOfRamdisk(env.beats);
      await sleep(200);
      await expect(check.check()).resolves.toBeUndefined();
    }
    expect(check.msUntilDue()).toBeGreaterThan(0);
    await sleep(TIMEOUT_MS + 100);
    await expect(check.check()).rejects.toMatchObject({ code: 'AGENT_LOST' });
  });

  it('verifies a heartbeat only once it could matter: at the next heartbeat, or when the wait comes due', async () => {
    let reads = 0;
    const counting = {
      judged: (...args: Parameters<AggregateRepository['judged']>) => (reads++, repository.judged(...args)),
    } as unknown as AggregateRepository;
    await using env = await livenessFixture({ repository: counting });
    const { liveness, beats } = env;
    // A command answered within one heartbeat interval: its one heartbeat is never read.
    {
      using short = liveness.follow(command);
      beatOfRamdisk(beats);
      await beats.flush();
      await sleep(100);
      await expect(short.check()).resolves.toBeUndefined();
    }
    expect(reads).toBe(0);
    using check = liveness.follow(command);
    await sleep(TIMEOUT_MS / 2);
    beatOfRamdisk(beats);
    await beats.flush();
    await sleep(100);
    expect(reads).toBe(0);
    await sleep(TIMEOUT_MS / 2);
    // Due: the heartbeat still held is verified now, and keeps the agent alive for a timeout from its arrival.
    expect(check.msUntilDue()).toBeLessThanOrEqual(50);
    await expect(check.check()).resolves.toBeUndefined();
    expect(reads).toBe(1);
    // The next heartbeat has the one before it verified; the last one waits for the wait to come due again.
    beatOfRamdisk(beats);
    await beats.flush();
    await sleep(TIMEOUT_MS / 2);
    beatOfRamdisk(beats);
    await beats.flush();
    await expect.poll(() => reads).toBe(2);
    await sleep(TIMEOUT_MS / 2);
    await expect(check.check()).resolves.toBeUndefined();
    expect(reads).toBe(3);
    await sleep(TIMEOUT_MS);
    await expect(check.check()).rejects.toMatchObject({ code: 'AGENT_LOST' });
  });

  it('counts only heartbeats for this command signed by an agent of this very node', async () => {
    await using env = await livenessFixture();
    const { liveness, beats } = env;
    const forger = agent('ramdisk-n1-aaaaaaaa', 'ramdisk', 'n1');
    const idOf = (a: ReturnType<typeof agent>) => (a.state.exists ? a.state.agentId : '');
    const strangers = [
      { agentId: idOf(ramdisk), signer: forger.signer, nodeId: 'n1', commandId: command.commandId },
      { agentId: idOf(siteAgent), signer: siteAgent.signer, nodeId: 'n1', commandId: command.commandId },
      { agentId: idOf(otherNode), signer: otherNode.signer, nodeId: 'n1', commandId: command.commandId },
      { agentId: idOf(ramdisk), signer: ramdisk.signer, nodeId: 'n1', commandId: 'wf-0123456789ab-s4-a1' },
      { agentId: 'ramdisk-n1-unknown0', signer: forger.signer, nodeId: 'n1', commandId: command.commandId },
    ];
    using check = liveness.follow(command);
    const until = Date.now() + TIMEOUT_MS + 300;
    while (Date.now() < until) {
      for (const s of strangers) {
        beats.publish(
          Subjects.agentHeartbeat('dc1', s.nodeId),
          JSON.stringify(
            signAgentHeartbeat({ agentId: s.agentId, siteId: 'dc1', nodeId: s.nodeId, commandId: s.commandId, sentAt: new Date().toISOString() }, s.signer),
          ),
        );
      }
      beats.publish(Subjects.agentHeartbeat('dc1', 'n1'), '{"not":"a heartbeat"}');
      await sleep(100);
    }
    await expect(check.check()).rejects.toMatchObject({ code: 'AGENT_LOST' });
  });

  it('never blames the agent for silence while the control plane itself is disconnected', async () => {
    let up = true;
    let upSince = Date.now();
    const connection: ConnectionState = { connected: () => up, upSinceMs: () => upSince };
    await using env = await livenessFixture({ connection });
    const { liveness } = env;
    using check = liveness.follow(command);
    up = false;
    await sleep(TIMEOUT_MS + 100);
    await expect(check.check()).resolves.toBeUndefined();
    // Back: the agent gets a full timeout from the reconnect to be heard again.
    up = true;
    upSince = Date.now();
    await expect(check.check()).resolves.toBeUndefined();
    await sleep(TIMEOUT_MS + 100);
    await expect(check.check()).rejects.toMatchObject({ code: 'AGENT_LOST' });
  });
});
