import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeAgentId, startNodeAgent, type NodeAgent } from '../../daemon/node/nodeAgent.ts';
import { moduleHost } from '../../daemon/node/modules/moduleHost.ts';
import { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { signAgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import type { HostModuleObservation } from '../../schemas/agent/hostModuleObservation.ts';
import { LEASE_HEADER } from '../../schemas/lease.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { assignmentAggregate } from '../../services/fleet/assignment/assignment.ts';
import { rolloutAggregate } from '../../services/fleet/rollout/rollout.ts';
import { BLOB_BUCKET } from '../../services/blobs/blobStore.ts';
import { startControlPlaneResultIntake } from '../../services/agents/resultIntake.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { RolloutController } from '../../services/processes/rolloutController/rolloutController.ts';
import { natsCommandChannel, ProcessCommandChannel } from '../../services/platform/commands/commandChannel.ts';
import { LeaseReader } from '../../services/platform/lease/leaseReader.ts';
import type { Runtime } from '../../services/stack/runtime.ts';
import { serviceCatalog } from '../../services/stack/serviceCatalog.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { startApi } from '../support/apiFixture.ts';
import { deployedNode } from '../support/deployedNode.ts';
import { publishVersions, resolverVersion, rolloutPublisher } from '../support/rolloutFleet.ts';

const hosts = ['n1', 'n2', 'n3'] as const;
const siteOf = (host: string) => `dc-${host}`;
const fixtures = rolloutPublisher('acme');

const versions = {
  v1: resolverVersion(fixtures, '1.0.0'),
  // A probe that takes a moment, so a controller can be stopped while a wave's hosts are still applying.
  v2: resolverVersion(fixtures, '1.1.0', 'sleep 1; resolver'),
  v3: resolverVersion(fixtures, '1.2.0', 'exit 3'),
  // Its stored bundle is swapped for other bytes once published: every host refuses it (the digest does not match).
  v4: resolverVersion(fixtures, '1.3.0'),
};
const text = (s: string) => new TextEncoder().encode(s);

// The tests run in order on the same hosts and log: each starts where the one before left the fleet.
describe('rollout-controller: a real nats-server, the control plane and three bcd node hosts on temp file trees', () => {
  let env: Awaited<ReturnType<typeof startApi>>;
  let stops: (() => Promise<unknown>)[] = [];
  const agents = new Map<string, { stateDir: string; agent: NodeAgent; nc: NatsConnection }>();
  let blobBaseUrl = '';

  const controller = async () => {
    const c = new RolloutController(env.nc, env.store, { tickMs: 200, probeTimeoutMs: 5_000 }, env.log, { blobBaseUrl });
    await c.start();
    return c;
  };
  const current = (host: string) => readlinkSync(join(agents.get(host)!.stateDir, 'modules/resolver/current'));
  const rollout = async () => (await env.bus.repository.load(rolloutAggregate, 'resolver', 'leader')).state.current;
  /** The version of resolver each host's assignment pins. */
  const pins = async () => {
    const pinned: Record<string, string | undefined> = {};
    for (const host of hosts) {
      const { state } = await env.bus.repository.load(assignmentAggregate, host, 'leader');
      pinned[host] = state.exists ? state.pins.find((p) => p.module === 'resolver')?.version : undefined;
    }
    return pinned;
  };
  const run = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
  /** The `module.apply` commands stored for `host` (the command stream keeps one per command id), oldest first. */
  const appliesTo = async (host: string) => {
    const found: AgentCommand[] = [];
    for (let seq = 0; ;) {
      const msg = await env.store.jsm.direct
        .getMessage(Streams.agentCommands.name, { seq: seq + 1, next_by_subj: Subjects.nodeAgentCommands(siteOf(host), host) })
        .catch(() => null);
      if (!msg) return found;
      found.push(AgentCommand.parse(msg.json()));
      seq = msg.seq;
    }
  };
  const startRollout = (fromVersion: string, toVersion: string) =>
    run('fleet.startRollout', {
      module: 'resolver',
      fromVersion,
      toVersion,
      hosts: [...hosts],
      canarySize: 1,
      wavePercent: 100,
      maxConsecutiveFailures: 1,
      waveTimeoutMs: 60_000,
    });

  beforeAll(async () => {
    env = await startApi();
    // Hosts fetch bundles from the control plane's capability URLs, so the API listens for real.
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    blobBaseUrl = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
    const registrations = startRegistrationService(env.nc, env.store, env.log);
    const responder = serveCommands(env.nc, env.bus, env.log);
    // Agents' signed results reach the results stream through the intake, as in every workflow-executor.
    const intake = await startControlPlaneResultIntake(env.nc, { repository: env.bus.repository, bus: env.bus, log: env.log });
    stops = [() => registrations.stop(), async () => responder.unsubscribe(), () => intake.stop()];
    await publishVersions(env.bus, env.app, fixtures, Object.values(versions));
    const bucket = await new Objm(env.nc).open(BLOB_BUCKET);
    const v4Sha256 = createHash('sha256').update(versions.v4.bundle).digest('hex');
    await bucket.putBlob({ name: `sha256-${v4Sha256}` }, text('not the bundle that was published'));
    for (const host of hosts) {
      await deployedNode(env.bus, host, siteOf(host));
      await run('fleet.pinModule', { nodeId: host, module: 'resolver', version: '1.0.0' });
      const stateDir = mkdtempSync(`/var/tmp/bc-rollout-${host}-`);
      // The host runs v1 already (as an earlier apply left it).
      await moduleHost({ stateDir, bootId: () => 'boot-a' }).apply(versions.v1.params, versions.v1.bundle);
      const nc = await connectNats(env.nats.url, `bcd-node-${host}`);
      const agent = await startNodeAgent(nc, { siteId: siteOf(host), nodeId: host, stateDir, bootId: () => 'boot-a', heartbeatIntervalMs: 200, log: env.log });
      await agent.registered;
      agents.set(host, { stateDir, agent, nc });
    }
  }, 120_000);

  afterAll(async () => {
    for (const { agent, nc, stateDir } of agents.values()) {
      await agent.stop();
      await nc.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
    for (const stop of stops) await stop();
    await env?.[Symbol.asyncDispose]();
  });

  it('rolls v1 to v2 canary first; a controller restarted mid-wave on the same durable finishes it, each host asked once', { timeout: 120_000 }, async () => {
    let first = await controller();
    // Stopped the moment wave 1's first apply (to n2) goes out: the reaction to that wave is cut short, its event goes
    // back to the durable, and the next instance decides the wave's applies again, with the same command ids.
    const published: string[] = [];
    let restarted: Promise<void> | undefined;
    const sent = env.nc.subscribe('bc.site.*.node.*.cmd', {
      callback: (_err, msg) => {
        const command = AgentCommand.parse(msg.json());
        published.push(`${command.nodeId} ${command.workflowId}`);
        if (restarted || command.nodeId === 'n1') return;
        const stopping = first.stop();
        restarted = stopping.then(async () => void (first = await controller()));
      },
    });
    await startRollout('1.0.0', '1.1.0');

    await expect.poll(async () => (await rollout())?.status, { timeout: 60_000, interval: 200 }).toBe('completed');
    await restarted;
    sent.unsubscribe();
    // The wave's applies were published again by the new instance (n2's a second time); the stream kept one of each.
    expect(published.filter((p) => p === 'n2 resolver-1').length).toBeGreaterThan(1);
    expect((await rollout())?.progress.outcomes).toEqual({ n1: 'healthy', n2: 'healthy', n3: 'healthy' });
    // The rollout's end pinned every host to what it runs now (the test pinned 1.0.0 before it).
    expect(await pins()).toEqual({ n1: '1.1.0', n2: '1.1.0', n3: '1.1.0' });
    for (const host of hosts) {
      expect(current(host)).toBe('1.1.0');
      // What converged is what the hosts' own verified heartbeats say, as the controller heard them.
      expect(first.model.observation(host, 'resolver')).toMatchObject({ version: '1.1.0', state: 'active', probes: [{ name: 'runs', ok: true }] });
      const applies = await appliesTo(host);
      expect(applies.map((c) => [c.workflowId, c.kind, (c.params as { version: string }).version])).toEqual([['resolver-1', 'module.apply', '1.1.0']]);
    }
    await first.stop();
  });

  it(
    'v3 fails its probe on the canary: the breaker halts, the other hosts keep v2, and the rollback restores v2 on the canary',
    { timeout: 120_000 },
    async () => {
      const controlling = await controller();
      try {
        // A heartbeat for n2 signed by a key no agent registered: never observed (every observation folded is recorded).
        const folded: HostModuleObservation[] = [];
        const fold = controlling.model.apply.bind(controlling.model);
        controlling.model.apply = (input) => {
          if (input.type === 'observed') folded.push(input.observation);
          fold(input);
        };
        const forger = generateKeyPairSync('ed25519');
        const forged = signAgentHeartbeat(
          {
            agentId: nodeAgentId('n2'),
            siteId: siteOf('n2'),
            nodeId: 'n2',
            sentAt: new Date().toISOString(),
            modules: [{ name: 'resolver', version: '1.2.0', digest: versions.v3.params.manifestSha256, state: 'active', probes: [{ name: 'runs', ok: true }] }],
          },
          { privateKey: forger.privateKey, publicKeyRaw: forger.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32) },
        );
        const forgedAt = Date.now();
        env.nc.publish(Subjects.agentHeartbeat(siteOf('n2'), 'n2'), JSON.stringify(forged));
        // Real heartbeats of n2 heard after the forged one: the forged one would have been the latest.
        await expect.poll(() => controlling.model.observation('n2', 'resolver')?.at ?? 0, { timeout: 10_000, interval: 50 }).toBeGreaterThan(forgedAt + 500);
        expect(folded.filter((o) => o.host === 'n2').map((o) => o.version)).not.toContain('1.2.0');
        expect(folded.filter((o) => o.host === 'n2' && o.at > forgedAt).length).toBeGreaterThan(0);

        // The plans pin what runs now (the last rollout's end re-pinned them): the next rollout moves from there.
        await startRollout('1.1.0', '1.2.0');
        await expect.poll(async () => (await rollout())?.status, { timeout: 60_000, interval: 200 }).toBe('halted');
        const halted = await rollout();
        expect(halted?.progress).toMatchObject({ startedWaves: 1, outcomes: { n1: 'failed' }, halted: { reason: 'canary_failed', failed: ['n1'] } });
        expect(current('n1')).toBe('1.2.0');
        for (const host of ['n2', 'n3']) {
          expect(current(host)).toBe('1.1.0');
          expect((await appliesTo(host)).map((c) => c.workflowId)).toEqual(['resolver-1']);
        }

        await run('fleet.rollbackRollout', { rolloutId: 'resolver-2' });
        await expect.poll(async () => (await rollout())?.status, { timeout: 60_000, interval: 200 }).toBe('rolled-back');
        expect((await rollout())?.rollback).toEqual({ targets: ['n1'], restored: { n1: 'healthy' } });
        expect(hosts.map(current)).toEqual(['1.1.0', '1.1.0', '1.1.0']);
        const canary = (await appliesTo('n1')).map((c) => [c.workflowId, (c.params as { version: string }).version]);
        expect(canary).toEqual([
          ['resolver-1', '1.1.0'],
          ['resolver-2', '1.2.0'],
          ['resolver-2', '1.1.0'],
        ]);
        for (const host of ['n2', 'n3']) expect((await appliesTo(host)).map((c) => c.workflowId)).toEqual(['resolver-1']);
        // The restored canary is pinned to the version it runs again; the hosts never touched keep their pin.
        await expect.poll(pins, { timeout: 10_000, interval: 100 }).toEqual({ n1: '1.1.0', n2: '1.1.0', n3: '1.1.0' });
      } finally {
        await controlling.stop();
      }
    },
  );

  it("runs as the stack's leased `rollout-controller` service: it takes its lease and its stamped commands pass the fence", { timeout: 120_000 }, async () => {
    const config = { ...env.config, publicUrl: blobBaseUrl };
    const runtime: Runtime = {
      config,
      nc: env.nc,
      store: env.store,
      log: env.log,
      bus: env.bus,
      commands: new ProcessCommandChannel(natsCommandChannel(env.nc)),
    };
    // The lease stamps on the controller's engine commands (`fleet.startWave`, `fleet.recordHostOutcome`).
    const stamps = new Set<string>();
    const spies = ['bc.cmd.>', 'bc.cmdp.>'].map((subject) =>
      env.nc.subscribe(subject, {
        callback: (_err, msg) => void (msg.subject.includes('.fleet.') && stamps.add(msg.headers?.get(LEASE_HEADER) || '(none)')),
      }),
    );
    const service = await serviceCatalog['rollout-controller']!(runtime);
    try {
      await expect
        .poll(async () => (await new LeaseReader(env.nc).leaders()).map((l) => l.service), { timeout: 30_000, interval: 200 })
        .toContain('rollout-controller');
      // The last rollout ended rolled back, so a new one may start: n2 from v2 back to v1.
      await run('fleet.startRollout', { module: 'resolver', fromVersion: '1.1.0', toVersion: '1.0.0', hosts: ['n2'], canarySize: 1, waveTimeoutMs: 60_000 });
      await expect.poll(async () => (await rollout())?.status, { timeout: 60_000, interval: 200 }).toBe('completed');
      expect(current('n2')).toBe('1.0.0');
      // Its pin too, through the fence like the rest of its commands.
      await expect.poll(pins, { timeout: 10_000, interval: 100 }).toEqual({ n1: '1.1.0', n2: '1.0.0', n3: '1.1.0' });
      expect(stamps.size).toBeGreaterThan(0);
      expect([...stamps].every((stamp) => /^rollout-controller\/\d+$/.test(stamp))).toBe(true);
    } finally {
      for (const spy of spies) spy.unsubscribe();
      await service.stop();
    }
  });

  it("a bundle whose digest does not match: the canary's signed refusal records it failed in seconds and the breaker halts", { timeout: 60_000 }, async () => {
    const controlling = await controller();
    try {
      const startedAt = Date.now();
      await run('fleet.startRollout', {
        module: 'resolver',
        fromVersion: '1.1.0',
        toVersion: '1.3.0',
        hosts: ['n1', 'n3'],
        canarySize: 1,
        waveTimeoutMs: 60_000,
      });
      // Far inside the wave's 60 s deadline: the refusal is heard, not waited out.
      await expect.poll(async () => (await rollout())?.status, { timeout: 15_000, interval: 100 }).toBe('halted');
      expect(Date.now() - startedAt).toBeLessThan(15_000);
      expect((await rollout())?.progress).toMatchObject({
        outcomes: { n1: 'failed' },
        consecutiveFailures: 1,
        halted: { reason: 'canary_failed', failed: ['n1'] },
      });
      expect(controlling.model.refused.size).toBe(1);
      expect(current('n1')).toBe('1.1.0');
      expect((await appliesTo('n3')).map((c) => c.workflowId)).toEqual(['resolver-1']);
    } finally {
      await controlling.stop();
    }
  });
});
