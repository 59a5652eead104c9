import { mkdtempSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startNodeAgent } from '../../daemon/node/nodeAgent.ts';
import { moduleHost } from '../../daemon/node/modules/moduleHost.ts';
import { hostModulesSensor } from '../../services/autonomy/sensors/hostModules.ts';
import { runPass } from '../../services/autonomy/sensors/runPass.ts';
import { defaultSensorSettings } from '../../services/autonomy/sensors/sensor.ts';
import { startAgentPresence } from '../../services/agents/agentPresence.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { readSnapshot } from '../../services/processes/fleetSensors/snapshotReader.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { moduleBundle, publisher } from '../daemon/moduleSupport.ts';
import { startApi } from '../support/apiFixture.ts';
import { deployedNode } from '../support/deployedNode.ts';

const GRACE_MS = 60_000;

describe('module sensors over the real snapshot: the modules read model and the heard heartbeats', () => {
  it("reads a deployed host's pinned plan and its bcd node's reported modules: never reported, drifted, in sync, failing", { timeout: 120_000 }, async () => {
    await using env = await startApi();
    const stateDir = mkdtempSync('/var/tmp/bc-module-sensors-');
    const registrations = startRegistrationService(env.nc, env.store, env.log);
    const presence = startAgentPresence(env.nc, { repository: env.bus.repository, windowMs: 5_000, log: env.log });
    const agentNc = await connectNats(env.nats.url, 'bcd-node-n1');
    try {
      await deployedNode(env.bus, 'n1');
      await env.bus.execute({ name: 'pki.registerPublisher', payload: { publisherId: 'acme', publicKey: publisher.publicKey }, actor: 'test' });
      const versions = { old: moduleBundle('1.0.0', { name: 'nginx' }), pinned: moduleBundle('1.1.0', { name: 'nginx' }) };
      for (const { bundle, params } of Object.values(versions)) {
        const put = await env.app.inject({
          method: 'PUT',
          url: '/v1/modules/bundles',
          headers: { 'content-type': 'application/octet-stream' },
          payload: Buffer.from(bundle),
        });
        const published = await env.app.inject({
          method: 'POST',
          url: '/v1/modules/nginx/versions',
          payload: { version: params.version, bundleSha256: put.json().sha256 },
        });
        expect(published.statusCode, published.body).toBe(201);
      }
      const pinned = await env.bus.execute({ name: 'fleet.pinModule', payload: { nodeId: 'n1', module: 'nginx', version: '1.1.0' }, actor: 'test' });
      const sources = { nodes: env.readers.get('nodes')!, modules: env.readers.get('modules')! };
      await sources.nodes.waitFor(pinned.seq, 5_000);
      await sources.modules.waitFor(pinned.seq, 5_000);

      const agent = await startNodeAgent(agentNc, { siteId: 'dc1', nodeId: 'n1', stateDir, bootId: () => 'boot-a', heartbeatIntervalMs: 200, log: env.log });
      await agent.registered;
      await expect.poll(() => presence.presenceOf('n1')?.alive, { timeout: 20_000, interval: 100 }).toBe(true);
      // Judged past the grace from the deploy, the assignment and the listening start alike.
      const pass = async () => {
        const snapshot = await readSnapshot(env.nc, sources, {
          now: new Date(Date.now() + 2 * GRACE_MS),
          stepTimeoutMs: 3_600_000,
          controlPlaneNodes: [],
          presence,
        });
        const { signals, reports } = runPass([hostModulesSensor], snapshot, { ...defaultSensorSettings, moduleReportGraceMs: GRACE_MS });
        expect(reports).toEqual([{ sensor: 'host-modules', ok: true, assessed: 1, signals: signals.length }]);
        return { snapshot, signals: signals.map((s) => `${s.kind}/${s.key} ${s.facts.modules}`) };
      };

      const first = await pass();
      expect(first.snapshot.assignments).toEqual([
        {
          nodeId: 'n1',
          assignedAt: expect.any(String),
          planDigest: expect.any(String),
          modules: [{ name: 'nginx', version: '1.1.0', digest: versions.pinned.params.manifestSha256 }],
        },
      ]);
      expect(first.snapshot.heartbeats).toEqual([expect.objectContaining({ nodeId: 'n1', role: 'node', modules: [] })]);
      // The host beats, but says nothing of the pinned module: that is not health.
      expect(first.signals).toEqual(['module-never-reported/n1 nginx']);

      // Modules land on the host's own state folder (as `module.apply` would put them); its next beats report them.
      const host = moduleHost({ stateDir, bootId: () => 'boot-a' });
      const reportedVersion = () => presence.presenceOf('n1')?.presence.modules[0]?.version;
      await host.apply(versions.old.params, versions.old.bundle);
      await expect.poll(reportedVersion, { timeout: 10_000, interval: 100 }).toBe('1.0.0');
      expect((await pass()).signals).toEqual(['module-drift/n1 nginx']);

      await host.apply(versions.pinned.params, versions.pinned.bundle);
      await expect.poll(reportedVersion, { timeout: 10_000, interval: 100 }).toBe('1.1.0');
      expect((await pass()).signals).toEqual([]);

      // A version nobody pinned, whose probe fails: both what is wrong with it are seen.
      const broken = moduleBundle('1.2.0', { name: 'nginx', probes: [{ name: 'listens', command: 'exit 3', shell: 'login' }] });
      await host.apply(broken.params, broken.bundle);
      await expect.poll(reportedVersion, { timeout: 10_000, interval: 100 }).toBe('1.2.0');
      // The version is reported as soon as it is current; its probe's result comes with a later beat.
      await expect
        .poll(async () => (await pass()).signals, { timeout: 10_000, interval: 200 })
        .toEqual(['module-drift/n1 nginx', 'module-verify-failed/n1 nginx']);
      await agent.stop();
    } finally {
      await agentNc.close();
      await presence.stop();
      await registrations.stop();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
