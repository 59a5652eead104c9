import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { mintJoinToken } from '../../services/trust/joinToken/mint.ts';
import { agentDurableFor } from '../../services/trust/broker/permissions.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { loadOrCreateIdentity, ramdiskAgentId } from '../../daemon/agent/identity.ts';
import { startBrokerEngine } from '../trust/brokerEngineFixture.ts';

type Engine = Awaited<ReturnType<typeof startBrokerEngine>>;

/**
 * `bcd site` and `bcd node` as processes under broker auth, killed with SIGKILL (a crash, or the power of the host
 * going) and started again the way an operator or the host's init does: with the environment they had, or with none.
 */
let engine: Engine;
let joinCredsFile: string;
const children: ChildProcess[] = [];

function bcd(args: string[], env: Record<string, string>): { child: ChildProcess; exit: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'daemon/bcd.ts', ...args], {
    cwd: process.cwd(),
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, BC_LOG_LEVEL: 'silent', ...env },
  });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return { child, exit: new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr }))) };
}

/** Whether the agent pulls its commands now: its durable has a pull request waiting, which only a running agent keeps. */
async function pulling(nc: NatsConnection, durable: string): Promise<boolean> {
  const info = await (await jetstreamManager(nc)).consumers.info(Streams.agentCommands.name, durable).catch(() => undefined);
  return (info?.num_waiting ?? 0) > 0;
}

/** Resolves once the agent pulls, or rejects with its stderr if it exits first. */
async function comesUp(started: ReturnType<typeof bcd>, durable: string): Promise<void> {
  const died = started.exit.then(({ code, stderr }) => {
    throw new Error(`bcd exited ${code}: ${stderr}`);
  });
  const up = expect.poll(() => pulling(engine.nc, durable), { timeout: 90_000, interval: 250 }).toBe(true);
  await Promise.race([up, died]);
}

async function killed(started: ReturnType<typeof bcd>): Promise<void> {
  started.child.kill('SIGKILL');
  await started.exit;
}

beforeAll(async () => {
  engine = await startBrokerEngine();
  await engine.send('site.create', { siteId: 'dc1', name: 'dc1' }, 'site-create-dc1');
  await engine.send('metal.enroll', enrollPayload('n1', 'dc1'), 'enroll-n1-0001');
  joinCredsFile = join(engine.dataDir, 'join.creds');
  writeFileSync(joinCredsFile, engine.joinCreds, { mode: 0o600 });
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await engine?.[Symbol.asyncDispose]();
});

describe('long-lived agents after a crash or a power cut', () => {
  it('bcd site restarts on the credential it keeps, with its spent token still in its environment or with nothing', { timeout: 300_000 }, async () => {
    const state = join(engine.dataDir, 'site-state');
    const args = ['site', '--site', 'dc1', '--nats', engine.broker.server.url, '--state', state];
    const durable = agentDurableFor({ role: 'site', agentId: 'site-dc1', siteId: 'dc1' });
    const { token } = await mintJoinToken(engine.send, { role: 'site', siteId: 'dc1', ttlSeconds: 600 });
    const env = { BC_JOIN_TOKEN: token, BC_JOIN_CREDS: joinCredsFile };

    const first = bcd(args, env);
    await comesUp(first, durable);
    expect(statSync(join(state, 'membership.json')).mode & 0o777).toBe(0o600);
    await killed(first);

    const sameEnvironment = bcd(args, env);
    await comesUp(sameEnvironment, durable);
    await killed(sameEnvironment);

    const bare = bcd(args, {});
    await comesUp(bare, durable);
    bare.child.kill('SIGTERM');
    expect((await bare.exit).code).toBe(0);
  });

  it(
    "regression (the power of a deployed host went between its join and its membership reaching the disk): bcd node joins again with the seed's token",
    { timeout: 300_000 },
    async () => {
      const state = join(engine.dataDir, 'node-state');
      const args = ['node', '--site', 'dc1', '--node', 'n1', '--nats', engine.broker.server.url, '--state', state];
      const durable = agentDurableFor({ role: 'node', agentId: 'node-n1', siteId: 'dc1', nodeId: 'n1' });
      const { token, tokenId } = await mintJoinToken(engine.send, { role: 'node', siteId: 'dc1', nodeId: 'n1', ttlSeconds: 600 });
      const env = { BC_JOIN_TOKEN: token, BC_JOIN_CREDS: joinCredsFile };

      // The power goes the moment the control plane spends the token: before its answer reaches the host.
      const first = bcd(args, env);
      const spent = engine.nc.subscribe(Subjects.aggregateEvents('trust', 'joinToken', tokenId));
      for await (const msg of spent) {
        if (msg.string().includes('JoinTokenUsed')) {
          first.child.kill('SIGKILL');
          break;
        }
      }
      await first.exit;
      expect(existsSync(join(state, 'membership.json')), 'the cut came after the membership was kept: nothing was tested').toBe(false);

      // The host's init starts it again with the seed it still has (the seed is wiped only once the membership exists).
      const again = bcd(args, env);
      await comesUp(again, durable);
      expect(statSync(join(state, 'membership.json')).mode & 0o777).toBe(0o600);
      expect(existsSync(join(state, 'join-user.seed'))).toBe(false);
      again.child.kill('SIGTERM');
      expect((await again.exit).code).toBe(0);
    },
  );

  it(
    "regression (a NATS node lost while a ramdisk joined): /init's restart of bcd ramdisk in the same boot is let in with the boot's token",
    { timeout: 300_000 },
    async () => {
      const state = join(engine.dataDir, 'ramdisk-state');
      const disk = join(engine.dataDir, 'ramdisk-disk.img');
      writeFileSync(disk, Buffer.alloc(1 << 20));
      const args = ['ramdisk', '--site', 'dc1', '--node', 'n1', '--nats', engine.broker.server.url, '--state', state, '--disk', disk];
      const { token, tokenId } = await mintJoinToken(engine.send, { role: 'ramdisk', siteId: 'dc1', nodeId: 'n1', ttlSeconds: 600 });
      const env = { BC_JOIN_TOKEN: token, BC_JOIN_CREDS: joinCredsFile };

      // The first process dies the moment its token is spent: the answer never reaches it.
      const first = bcd(args, env);
      const spent = engine.nc.subscribe(Subjects.aggregateEvents('trust', 'joinToken', tokenId));
      for await (const msg of spent) {
        if (msg.string().includes('JoinTokenUsed')) {
          first.child.kill('SIGKILL');
          break;
        }
      }
      await first.exit;

      // The ramdisk's RAM (its state folder) outlives the process: the same key and user key send the same join.
      const again = bcd(args, env);
      const agentId = ramdiskAgentId('n1', loadOrCreateIdentity(state).keyId);
      await comesUp(again, agentDurableFor({ role: 'node', agentId, siteId: 'dc1', nodeId: 'n1' }));
      again.child.kill('SIGTERM');
      expect((await again.exit).code).toBe(0);
    },
  );
});
