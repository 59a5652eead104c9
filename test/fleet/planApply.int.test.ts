import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeAgent, type NodeAgent } from '../../daemon/node/nodeAgent.ts';
import { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { startControlPlaneResultIntake } from '../../services/agents/resultIntake.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { RolloutController } from '../../services/processes/rolloutController/rolloutController.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { startApi } from '../support/apiFixture.ts';
import { runCli } from '../support/cliRunner.ts';
import { deployedNode } from '../support/deployedNode.ts';
import { publishVersions, resolverVersion, rolloutPublisher } from '../support/rolloutFleet.ts';

const fixtures = rolloutPublisher('acme');
const versions = {
  v1: resolverVersion(fixtures, '1.0.0'),
  v2: resolverVersion(fixtures, '1.1.0'),
  // Its probe fails: the host switches, probes, and reports it failed.
  v3: resolverVersion(fixtures, '1.2.0', 'exit 3'),
};

// The tests run in order on the same host and log: each starts where the one before left it.
describe('fleet.applyPlan: a real nats-server, the control plane, the rollout controller and a fresh bcd node host', () => {
  let env: Awaited<ReturnType<typeof startApi>>;
  let api = '';
  let controller: RolloutController;
  let stops: (() => Promise<unknown>)[] = [];
  let host: { stateDir: string; agent: NodeAgent; nc: NatsConnection } | undefined;

  const run = (name: string, payload: unknown, commandId?: string) => env.bus.execute({ name, payload, actor: 'test', ...(commandId ? { commandId } : {}) });
  const current = () => readlinkSync(join(host!.stateDir, 'modules/resolver/current'));
  /** The `module.apply` commands stored for n1, oldest first: [workflow, version]. */
  const applies = async () => {
    const found: [string, string][] = [];
    for (let seq = 0; ;) {
      const msg = await env.store.jsm.direct
        .getMessage(Streams.agentCommands.name, { seq: seq + 1, next_by_subj: Subjects.nodeAgentCommands('dc-n1', 'n1') })
        .catch(() => null);
      if (!msg) return found;
      const command = AgentCommand.parse(msg.json());
      found.push([command.workflowId, (command.params as { version: string }).version]);
      seq = msg.seq;
    }
  };

  beforeAll(async () => {
    env = await startApi();
    // The host fetches its bundles from the control plane's capability URLs, so the API listens for real.
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    api = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
    const registrations = startRegistrationService(env.nc, env.store, env.log);
    const responder = serveCommands(env.nc, env.bus, env.log);
    const intake = await startControlPlaneResultIntake(env.nc, { repository: env.bus.repository, bus: env.bus, log: env.log });
    stops = [() => registrations.stop(), async () => responder.unsubscribe(), () => intake.stop()];
    await publishVersions(env.bus, env.app, fixtures, Object.values(versions));
    await deployedNode(env.bus, 'n1', 'dc-n1');
    await deployedNode(env.bus, 'n2', 'dc-n2');
    await run('fleet.pinModule', { nodeId: 'n1', module: 'resolver', version: '1.0.0' });
    // Freshly deployed: nothing installed, only its plan pinned.
    const stateDir = mkdtempSync('/var/tmp/bc-plan-apply-n1-');
    const nc = await connectNats(env.nats.url, 'bcd-node-n1');
    const agent = await startNodeAgent(nc, { siteId: 'dc-n1', nodeId: 'n1', stateDir, bootId: () => 'boot-a', heartbeatIntervalMs: 200, log: env.log });
    await agent.registered;
    host = { stateDir, agent, nc };
    controller = new RolloutController(env.nc, env.store, { tickMs: 200, probeTimeoutMs: 5_000 }, env.log, { blobBaseUrl: api });
    await controller.start();
  }, 120_000);

  afterAll(async () => {
    await controller?.stop();
    if (host) {
      await host.agent.stop();
      await host.nc.close();
      rmSync(host.stateDir, { recursive: true, force: true });
    }
    for (const stop of stops) await stop();
    await env?.[Symbol.asyncDispose]();
  });

  it(
    'installs the pinned plan on the host, which reports it; a redelivered request sends nothing new, nor one the host already runs',
    { timeout: 60_000 },
    async () => {
      const first = await run('fleet.applyPlan', { nodeId: 'n1' }, 'apply-n1-a');
      expect(first.events).toMatchObject([{ type: 'HostPlanApplyRequested', data: { nodeId: 'n1', requestId: 'apply-n1-a', plan: { resolver: '1.0.0' } } }]);
      // `bcd node` switches `current` before it probes: its first report of 1.0.0 may be active with no probe yet.
      const probed = () => {
        const seen = controller.model.observation('n1', 'resolver');
        return seen && seen.probes.length > 0 ? seen.version : undefined;
      };
      await expect.poll(probed, { timeout: 30_000, interval: 100 }).toBe('1.0.0');
      expect(controller.model.observation('n1', 'resolver')).toMatchObject({
        state: 'active',
        digest: versions.v1.params.manifestSha256,
        probes: [{ name: 'runs', ok: true }],
      });
      expect(current()).toBe('1.0.0');

      // The same request again (its command id): answered with its events, no second command.
      expect((await run('fleet.applyPlan', { nodeId: 'n1' }, 'apply-n1-a')).events).toEqual(first.events);
      // Another request while the host reports the plan: recorded, and nothing to send.
      expect((await run('fleet.applyPlan', { nodeId: 'n1' }, 'apply-n1-b')).events).toHaveLength(1);
      // Both decided before this point: a later command shows the controller went past them without sending.
      await run('fleet.pinModule', { nodeId: 'n1', module: 'resolver', version: '1.1.0' });
      await run('fleet.applyPlan', { nodeId: 'n1' }, 'apply-n1-c');
      await expect.poll(() => controller.model.observation('n1', 'resolver')?.version, { timeout: 30_000, interval: 100 }).toBe('1.1.0');
      expect(await applies()).toEqual([
        ['apply-n1-a', '1.0.0'],
        ['apply-n1-c', '1.1.0'],
      ]);
    },
  );

  it('`assignments apply --follow` waits for the host to report the plan: exit 3 when a module reports unhealthy', { timeout: 90_000 }, async () => {
    await run('fleet.pinModule', { nodeId: 'n1', module: 'resolver', version: '1.2.0' });
    const failed = await runCli(api, env.dataDir, ['assignments', 'apply', 'n1', '--follow']);
    expect(failed.code, failed.stderr).toBe(3);
    expect(failed.stdout).toMatch(/n1: resolver 1\.2\.0 failed \(failed probes: runs\)/);

    await run('fleet.pinModule', { nodeId: 'n1', module: 'resolver', version: '1.1.0' });
    const healthy = await runCli(api, env.dataDir, ['assignments', 'apply', 'n1', '--follow']);
    expect(healthy.code, healthy.stderr).toBe(0);
    expect(healthy.stdout).toMatch(/n1: resolver 1\.1\.0 active/);
    expect(current()).toBe('1.1.0');
  });

  it('refuses a node not enrolled (NOT_FOUND) and a host with no plan pinned (PRECONDITION_FAILED), by code', { timeout: 30_000 }, async () => {
    const unknown = await runCli(api, env.dataDir, ['assignments', 'apply', 'ghost']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/error NOT_FOUND/);
    await expect(run('fleet.applyPlan', { nodeId: 'n2' })).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
  });
});
