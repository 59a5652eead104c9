import { describe, expect, it } from 'vitest';
// The plugin and what it is built with: public entry points only.
import { runPlugin, type RunningPlugin } from 'better-compute/sdk/worker';
import acmeAutoinstall from '../../plugins/acme-autoinstall/index.ts';
import { readIso9660 } from '../../daemon/simulator/isoImage.ts';
import { apiClient } from '../support/apiClient.ts';
import { startPluginProcess } from '../support/pluginProcess.ts';
import { startProcessStack } from '../support/processStack.ts';
import { openReadModel } from '../support/readModelDb.ts';
import { streamMessages } from '../support/plaintextScan.ts';

const nodeId = 'sim-m001';
const PROFILE = 'ubuntu-24.04-autoinstall';
const sshKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAutoinstallWalkthroughKey ops@example';

/** Per completed release of the node: how many attested, succeeded wipes it holds. */
const attestedWipesPerRelease = `
  SELECT w.workflow_id AS workflowId,
         (SELECT count(*) FROM workflow_steps s
           WHERE s.workflow_id = w.workflow_id AND s.step_id = 'disk.wipe' AND s.state = 'succeeded'
             AND json_extract(s.output, '$.attested') = 1) AS attestedWipes
    FROM workflows w
   WHERE w.node_id = ? AND w.operation = 'release' AND w.state = 'completed'`;

describe.each([
  { mode: 'in-process', loops: 20 },
  { mode: 'separate process', loops: 2 },
])('walkthrough 1: Ubuntu autoinstall via Redfish virtual media, plugin $mode', ({ mode, loops }) => {
  it(`deploys and releases ${loops} times with a fresh single-use token inside the ISO only`, { timeout: 420_000 }, async () => {
    await using stack = await startProcessStack({
      layout: 'single',
      machines: 1,
      env: { BC_TEST_SIM_DISK_BYTES: String(8 << 20), BC_TEST_SIM_BMC_DELAY_MS: '50' },
    });
    const client = apiClient(stack.api, stack.token);
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${stack.api}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    expect((await post('/v1/profiles/validate', { profileId: PROFILE })).body).toMatchObject({ ok: false, issues: [{ code: 'PROFILE_UNKNOWN' }] });

    let inProcess: RunningPlugin | undefined;
    const processPlugin = mode === 'separate process' ? await startPluginProcess('plugins/acme-autoinstall/index.ts', stack.env) : undefined;
    if (!processPlugin) inProcess = await runPlugin(acmeAutoinstall, { env: { ...stack.env, BC_LOG_LEVEL: 'warn' } });
    const nc = await stack.connect('walkthrough');
    try {
      expect((await post('/v1/profiles/validate', { profileId: PROFILE })).body).toEqual({ profileId: PROFILE, ok: true, issues: [] });
      const plugins = await client.getJson('/v1/plugins');
      expect(plugins.items).toMatchObject([
        { pluginId: 'acme-autoinstall', alive: true, steps: [{ id: 'autoinstall.renderIso' }], profiles: [{ id: PROFILE }] },
      ]);
      expect((await client.getJson('/v1/drivers')).items).toMatchObject([{ id: 'redfish-virtual-media', pluginId: 'acme-autoinstall' }]);
      await client.waitForNodeState(nodeId, 'ready', 90_000);

      const tokens: string[] = [];
      for (let loop = 0; loop < loops; loop++) {
        const deploy = await client.command('metal.deploy', { nodeId, profile: PROFILE, role: 'host', sshKeys: [sshKey] });
        expect(deploy.status, JSON.stringify(deploy.body)).toBe(201);
        const workflowId = deploy.body.events[0].data.workflowId as string;
        const deployed = await client.waitForNodeState(nodeId, 'deployed', 120_000, 50).catch(async (err: Error) => {
          const wf = await client.getJson(`/v1/workflows/${workflowId}`).catch(() => null);
          throw new Error(
            `${err.message} (loop ${loop})\nworkflow: ${JSON.stringify(wf)}\n${stack.logs()}\n--- plugin\n${processPlugin?.output().slice(-3000) ?? ''}`,
          );
        });
        expect(deployed.role).toBe('host');

        const wf = await client.getJson(`/v1/workflows/${workflowId}`);
        expect(wf.steps.map((s: { stepId: string }) => s.stepId)).toEqual([
          'autoinstall.renderIso',
          'media.insert',
          'boot.setOnce',
          'power.set',
          'wait.agentJoined',
          'boot.clear',
          'media.eject',
        ]);
        const { url, sha256 } = wf.steps[0].output as { url: string; sha256: string };
        const iso = new Uint8Array(await (await fetch(url)).arrayBuffer());
        const userData = new TextDecoder().decode(readIso9660(iso).get('user-data'));
        const token = /--join-token (\S+)/.exec(userData)?.[1];
        expect(token, userData).toMatch(/^bcj_/);
        expect(userData).toContain(sshKey);
        tokens.push(token!);
        // The machine installed from exactly that ISO, streamed from its site's verified cache, and the media is out again.
        const machine = (await stack.site.machines())[nodeId]!;
        expect(machine.installs.at(-1)).toMatchObject({ isoSha256: sha256, mediaUrl: expect.stringMatching(new RegExp(`/images/${sha256}$`)) });
        expect(machine.insertedMedia).toBeNull();
        // Another node's path or a guessed capability reads nothing.
        expect((await fetch(url.replace(`/blobs/${nodeId}/`, '/blobs/sim-m002/'))).status).toBe(404);

        const release = await client.command('metal.undeploy', { nodeId });
        expect(release.status, JSON.stringify(release.body)).toBe(201);
        // Back in the pool, the node is deployed as nothing.
        expect((await client.waitForNodeState(nodeId, 'ready', 120_000, 50)).role).toBeNull();
      }

      // A fresh token each time, each spent exactly once, by the installed host's node agent.
      expect(new Set(tokens).size).toBe(loops);
      const events = await streamMessages(nc, 'BC_EVENTS');
      const joinEvents = events.flatMap((m) => (JSON.parse(m.data) as { events: { type: string; data: { tokenId?: string; agentId?: string } }[] }).events);
      // Other joins spend their own tokens (the site agent's, each release's wiping ramdisk); the ISO's tokens are
      // spent by the host's node agent and by nothing else.
      const used = joinEvents.filter((e) => e.type === 'JoinTokenUsed');
      const spent = used.filter((e) => e.data.agentId === `node-${nodeId}`);
      expect(used.filter((e) => tokens.some((t) => t.split('_')[1] === e.data.tokenId)).map((e) => e.data.agentId)).toEqual(
        Array(loops).fill(`node-${nodeId}`),
      );
      expect(joinEvents.filter((e) => e.type === 'JoinRefused')).toEqual([]);
      expect(new Set(spent.map((e) => e.data.tokenId))).toEqual(new Set(tokens.map((t) => t.split('_')[1])));
      expect(spent).toHaveLength(loops);
      // The token is inside the ISO and nowhere else: not in any agent command, not in any event.
      const seen = [...(await streamMessages(nc, 'BC_AGENT_COMMANDS')), ...events];
      for (const token of tokens) {
        const secret = /^bcj_jt-[a-z0-9]+_(.+)$/.exec(token)![1]!;
        expect(seen.filter((m) => m.text.includes(secret)).map((m) => m.subject)).toEqual([]);
      }

      // Every transition into ready after a release was preceded by exactly one attested wipe.
      const history = await client.getJson(`/v1/events?aggregate=metal.node/${nodeId}`);
      const lastSeq = Math.max(...history.items.map((e: { seq: number }) => e.seq));
      await client.getJson(`/v1/nodes/${nodeId}/workflows?minSeq=${lastSeq}&limit=1`);
      using db = openReadModel(stack.dataDir, 'workflows');
      const rows = db.prepare(attestedWipesPerRelease).all(nodeId) as { attestedWipes: number }[];
      expect(rows).toHaveLength(loops);
      expect(rows.filter((r) => r.attestedWipes !== 1)).toEqual([]);
      expect(db.prepare(`SELECT state, count(*) AS n FROM workflows WHERE node_id = ? AND operation = 'deploy' GROUP BY state`).all(nodeId)).toEqual([
        { state: 'completed', n: loops },
      ]);
    } finally {
      await nc.close();
      await inProcess?.stop();
      await processPlugin?.stop();
    }
  });
});
