import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The plugin and what it runs on: public entry points only, as an outside package would use them.
import { runPlugin, type RunningPlugin } from 'better-compute/sdk/worker';
import talos from '../../plugins/talos/index.ts';
import { startPluginProcess } from '../support/pluginProcess.ts';
import { streamMessages } from '../support/plaintextScan.ts';
import { startIsoServer, startTalosApi } from './talosApi.ts';
import { apiClient } from '../support/apiClient.ts';
import { startProcessStack } from '../support/processStack.ts';

const SITE = 'talos-dc';
const POOL = 'talos-metal';
const PROFILE = 'talos-1.8';
// A loopback /24 of this run: each machine's NIC shows one address of it, where its Talos API stand-in listens.
const subnet = `127.77.${1 + (process.pid % 250)}`;
const machines = [
  { mode: 'in-process', nodeId: `${SITE}-m001`, host: `${subnet}.11`, heavy: true },
  { mode: 'separate process', nodeId: `${SITE}-m002`, host: `${subnet}.12`, heavy: false },
] as const;

let stack: Awaited<ReturnType<typeof startProcessStack<'single'>>>;
let iso: Awaited<ReturnType<typeof startIsoServer>>;
const apis = new Map<string, Awaited<ReturnType<typeof startTalosApi>>>();

beforeAll(async () => {
  iso = await startIsoServer();
  stack = await startProcessStack({
    layout: 'single',
    machines: machines.length,
    env: {
      BC_SIM_SITE_ID: SITE,
      BC_TEST_SIM_POOL_ID: POOL,
      BC_TEST_SIM_HOST_ADDRESSES: machines.map((m) => m.host).join(','),
      BC_TEST_SIM_DISK_BYTES: String(8 << 20),
      BC_TEST_SIM_BMC_DELAY_MS: '50',
    },
    beforeSite: async (client) => {
      const site = await client.command('site.create', { siteId: SITE, name: 'Talos walkthrough' });
      expect(site.status, JSON.stringify(site.body)).toBe(201);
      const pool = await client.command('vps.createPool', {
        poolId: POOL,
        class: 'metal',
        agent: 'none',
        siteId: SITE,
        policy: { allowUnverifiedRelease: true, provisioningCidrs: [`${subnet}.0/24`] },
      });
      expect(pool.status, JSON.stringify(pool.body)).toBe(201);
    },
  });
  // "Booted" is what the simulated machine does: it booted the CD the deploy inserted (no guessing from time).
  for (const m of machines) {
    apis.set(
      m.nodeId,
      await startTalosApi(
        m.host,
        async () => {
          const report = (await stack.site.machines())[m.nodeId];
          return report?.runState === 'media' && report.boots.includes('Cd');
        },
        { bootingFor: 2 },
      ),
    );
  }
}, 240_000);

afterAll(async () => {
  for (const api of apis.values()) await api.close();
  await iso?.close();
  await stack?.[Symbol.asyncDispose]();
}, 60_000);

describe.each(machines)('walkthrough: Talos on an agentless pool, plugin $mode', ({ mode, nodeId, host, heavy }) => {
  it('deploys Talos out of band and releases it unverified, never via an agent on the node', { timeout: 300_000 }, async () => {
    const client = apiClient(stack.api, stack.token);
    const talosApi = apis.get(nodeId)!;
    let inProcess: RunningPlugin | undefined;
    const processPlugin = mode === 'separate process' ? await startPluginProcess('plugins/talos/index.ts', stack.env) : undefined;
    if (!processPlugin) inProcess = await runPlugin(talos, { env: { ...stack.env, BC_LOG_LEVEL: 'warn' } });
    const seen: { state: string; connected: boolean; schedulable: boolean }[] = [];
    const waitFor = async (state: string, timeoutMs = 180_000) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const view = await client.node(nodeId).catch(() => undefined);
        if (view) seen.push({ state: view.state, connected: view.connected, schedulable: view.schedulable });
        if (view?.state === state) return view;
        if (view?.state === 'failed') throw new Error(`node ${nodeId} failed: ${JSON.stringify(view.failure)}\n${stack.logs()}`);
        if (Date.now() > until) throw new Error(`node ${nodeId} is ${view?.state}, not ${state}\n${stack.logs()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      // Enrolled into the agentless pool; inspected over Redfish only, and the address came from the BMC's NIC.
      const ready = await waitFor('ready', 120_000);
      expect(ready).toMatchObject({ poolId: POOL, agent: 'none', connected: false, schedulable: false });
      expect(ready.addresses).toContain(host);
      expect(ready.inventory.nics[0].ipv4Addresses).toEqual([host]);
      const history = async () => (await client.getJson(`/v1/events?aggregate=metal.node/${nodeId}`)).items as { type: string; data: any }[];
      const inspection = (await history()).find((e) => e.type === 'NodeOperationRequested' && e.data.operation === 'inspect')!;
      const inspectWf = await client.getJson(`/v1/workflows/${inspection.data.workflowId}`);
      expect(inspectWf.steps.map((s: { stepId: string }) => s.stepId)).toEqual(['inventory.read']);

      const deploy = await client.command('metal.deploy', {
        nodeId,
        profile: PROFILE,
        role: 'talos',
        inputs: { talosIsoUrl: iso.url, talosSpkiSha256: talosApi.spkiSha256, talosPort: talosApi.port },
      });
      expect(deploy.status, JSON.stringify(deploy.body)).toBe(201);
      const deployWfId = deploy.body.events[0].data.workflowId as string;
      await waitFor('deployed');
      const deployWf = await client.getJson(`/v1/workflows/${deployWfId}`);
      expect(deployWf.steps.map((s: { stepId: string }) => s.stepId)).toEqual([
        'media.insert',
        'boot.setOnce',
        'power.set',
        'wait.talosReady',
        'boot.clear',
        'media.eject',
      ]);
      expect(deployWf.steps[3].output).toEqual({ version: 'v1.8.3' });
      // The step kept polling through the 503s (one request at a time, across its not-ready reruns) until the 200.
      const statuses = talosApi.requests.map((r) => r.status);
      expect(statuses.slice(0, 2)).toEqual([503, 503]);
      expect(statuses.indexOf(200)).toBeGreaterThanOrEqual(2);
      const machine = (await stack.site.machines())[nodeId]!;
      expect(machine).toMatchObject({ runState: 'media', ramdiskBooted: false });
      expect(machine.boots).toContain('Cd');

      const rescue = await client.command('metal.rescue', { nodeId });
      expect(rescue.status).toBe(422);
      expect(rescue.body.code).toBe('UNSUPPORTED');

      const release = await client.command('metal.undeploy', { nodeId });
      expect(release.status, JSON.stringify(release.body)).toBe(201);
      const releaseWfId = release.body.events[0].data.workflowId as string;
      const released = await waitFor('ready');
      expect(released).toMatchObject({ maintenance: false, connected: false, schedulable: false, poolId: POOL });
      const releaseWf = await client.getJson(`/v1/workflows/${releaseWfId}`);
      expect(releaseWf.steps.map((s: { stepId: string }) => s.stepId)).toEqual(['media.eject', 'power.set']);
      const events = await history();
      expect(events.filter((e) => e.type === 'NodeReleaseUnverified').map((e) => e.data)).toEqual([{ nodeId, workflowId: releaseWfId, poolId: POOL }]);
      expect(events.filter((e) => e.type === 'NodeWipeStarted' || e.type === 'NodeOperationFailed')).toEqual([]);

      // Never connected, never schedulable, in any state the node went through.
      expect(seen.filter((v) => v.connected || v.schedulable)).toEqual([]);

      if (heavy) {
        // Every agent command about this node went to the site agent's subject; none to a node (ramdisk/OS) subject.
        const nc = await stack.connect('talos-walkthrough');
        try {
          const commands = (await streamMessages(nc, 'BC_AGENT_COMMANDS'))
            .map((m) => ({ subject: m.subject, command: JSON.parse(m.data) as { nodeId: string; kind: string } }))
            .filter((m) => m.command.nodeId === nodeId);
          expect(commands.length).toBeGreaterThan(0);
          expect([...new Set(commands.map((m) => m.subject))]).toEqual([`bc.site.${SITE}.cmd.${nodeId}`]);
          expect(new Set(commands.map((m) => m.command.kind))).toEqual(
            new Set(['inventory.read', 'media.insert', 'boot.setOnce', 'power.set', 'site.httpProxy', 'boot.clear', 'media.eject']),
          );
        } finally {
          await nc.close();
        }
      }
    } finally {
      await inProcess?.stop();
      await processPlugin?.stop();
    }
  });
});
