import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPluginsFolder, type RunningPlugins } from '../../daemon/bcx/pluginsFolder.ts';
import { startNodeAgent, type NodeAgent } from '../../daemon/node/nodeAgent.ts';
import { heartbeatSignedBy, openAgentHeartbeat, type AgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { bcxPluginFolder } from '../support/bcxPluginFolder.ts';
import { agentCommand, log, startAgentBackbone } from './harness.ts';
import { processAlive } from '../support/processAlive.ts';

interface PluginEntry {
  pid: number | null;
  applies: number;
  userDataApplies: number;
  lastUserData: string | null;
}

/** Every file under `dir`, recursively. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));

describe('bcd node runs instances through a bcx runtime plugin', () => {
  let env: Awaited<ReturnType<typeof startAgentBackbone>>;
  let plugins: Awaited<ReturnType<typeof bcxPluginFolder>>;
  let running: RunningPlugins;
  let agent: NodeAgent;
  let lastBeat: AgentHeartbeat | undefined;
  const stateDir = mkdtempSync('/var/tmp/bc-node-instances-');
  const pluginState = () => join(plugins.stateRoot, 'plugins/process-runtime');
  const pluginEntries = (): Record<string, PluginEntry> => {
    try {
      return JSON.parse(readFileSync(join(pluginState(), 'instances.json'), 'utf8')) as Record<string, PluginEntry>;
    } catch {
      return {};
    }
  };
  const startAgent = async () => {
    agent = await startNodeAgent(env.nc, {
      siteId: 'dc1',
      nodeId: 'n1',
      stateDir,
      runtimes: () => running.hosts.values(),
      reconcileIntervalMs: 200,
      heartbeatIntervalMs: 100,
      bootId: () => 'boot-a',
      log,
    });
    await agent.registered;
  };
  const spec = (id: string, desiredState: 'running' | 'stopped', extra: Record<string, unknown> = {}) => ({
    id,
    runtime: 'process-runtime',
    flavor: { name: 'small', vcpus: 1, memoryMiB: 512, diskGiB: 10 },
    image: { ref: 'test:plain' },
    desiredState,
    ...extra,
  });
  const run = async (kind: 'instance.apply' | 'instance.remove', params: Record<string, unknown>) => {
    const command = agentCommand(kind, { params });
    await env.publish(command);
    return env.result(command);
  };
  const reported = (id: string) => lastBeat?.instances?.find((i) => i.id === id);

  beforeAll(async () => {
    plugins = await bcxPluginFolder('processRuntime');
    plugins.pin('process-runtime');
    running = await startPluginsFolder(plugins.folder, { stateRoot: plugins.stateRoot, privileged: new Set(), log });
    expect(running.unusable).toEqual([]);
    env = await startAgentBackbone();
    env.nc.subscribe(Subjects.agentHeartbeat('dc1', 'n1'), {
      callback: (_err, msg) => {
        const opened = openAgentHeartbeat(msg.json());
        // Only what the agent's registered key signed counts, as in the control plane's presence.
        if (opened && agent && heartbeatSignedBy(opened.signed, agent.publicKey)) lastBeat = opened.heartbeat;
      },
    });
    await startAgent();
  });
  afterAll(async () => {
    await agent?.stop();
    await running?.stop();
    for (const entry of Object.values(pluginEntries())) if (processAlive(entry.pid)) process.kill(entry.pid!, 'SIGKILL');
    await env?.[Symbol.asyncDispose]();
    plugins?.[Symbol.dispose]();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('applies running, then stopped, idempotently; user data on the first apply only, never kept; removes', async () => {
    const userData = '#cloud-config\nsecret: ud-only-once-7f3a';
    const first = await run('instance.apply', spec('vm-1', 'running', { userData }));
    expect(first).toMatchObject({
      ok: true,
      result: {
        ok: true,
        payload: { runtime: 'process-runtime', status: { id: 'vm-1', state: 'running', addresses: ['127.0.0.1'] }, userDataDelivered: true },
      },
    });
    const pid = pluginEntries()['vm-1']!.pid;
    expect(processAlive(pid)).toBe(true);
    // Answered: the host keeps no copy of the user data anywhere in its state.
    for (const file of filesUnder(stateDir)) expect(readFileSync(file, 'utf8')).not.toContain('ud-only-once');
    await expect
      .poll(() => reported('vm-1'), { timeout: 5_000 })
      .toEqual({ id: 'vm-1', runtime: 'process-runtime', desiredState: 'running', state: 'running', addresses: ['127.0.0.1'], message: `pid ${pid}` });

    // Applied again (user data sent again by the control plane): the same process, and no user data passed on.
    const again = await run('instance.apply', spec('vm-1', 'running', { userData }));
    expect(again).toMatchObject({ ok: true, result: { ok: true, payload: { status: { state: 'running', message: `pid ${pid}` }, userDataDelivered: false } } });
    expect(pluginEntries()['vm-1']).toMatchObject({ pid, applies: 2, userDataApplies: 1, lastUserData: userData });

    const stopped = await run('instance.apply', spec('vm-1', 'stopped'));
    expect(stopped).toMatchObject({ ok: true, result: { ok: true, payload: { status: { state: 'stopped', addresses: [] } } } });
    expect(processAlive(pid)).toBe(false);
    await expect.poll(() => reported('vm-1')?.state, { timeout: 5_000 }).toBe('stopped');

    expect(await run('instance.remove', { id: 'vm-1' })).toMatchObject({ ok: true, result: { ok: true, payload: { id: 'vm-1', removed: true } } });
    expect(pluginEntries()['vm-1']).toBeUndefined();
    expect(existsSync(join(stateDir, 'instances/vm-1.json'))).toBe(false);
    await expect.poll(() => reported('vm-1'), { timeout: 5_000 }).toBeUndefined();
    // A redelivered remove finds nothing to do.
    expect(await run('instance.remove', { id: 'vm-1' })).toMatchObject({ ok: true, result: { ok: true, payload: { removed: false } } });
  });

  it('refuses a runtime that is not loaded, and fails an instance the runtime answers in error', async () => {
    const unknown = await run('instance.apply', { ...spec('vm-x', 'running'), runtime: 'firecracker' });
    expect(unknown).toMatchObject({ ok: true, result: { ok: false, errorCode: 'RUNTIME_NOT_LOADED' } });
    expect(existsSync(join(stateDir, 'instances/vm-x.json'))).toBe(false);

    const broken = await run('instance.apply', spec('vm-e', 'running', { image: { ref: 'test:error' } }));
    expect(broken).toMatchObject({ ok: true, result: { ok: false, errorCode: 'INSTANCE_FAILED' } });
    await expect.poll(() => reported('vm-e'), { timeout: 5_000 }).toMatchObject({ state: 'error', message: 'the image does not boot' });
    expect(await run('instance.remove', { id: 'vm-e' })).toMatchObject({ ok: true, result: { ok: true, payload: { removed: true } } });
  });

  it('recovers an apply the plugin died in from the journal, and reconciles again when bcd node restarts', async () => {
    const userData = 'ud-of-vm-2';
    const command = agentCommand('instance.apply', { params: spec('vm-2', 'running', { userData, image: { ref: 'test:slow' } }) });
    await env.publish(command);
    // The plugin started the process and is still in its apply: killed now, it never answers.
    await expect.poll(() => pluginEntries()['vm-2']?.pid ?? null, { timeout: 5_000 }).not.toBeNull();
    const pid = pluginEntries()['vm-2']!.pid;
    process.kill(Number(readFileSync(join(pluginState(), 'plugin.pid'), 'utf8')), 'SIGKILL');
    expect(await env.result(command)).toMatchObject({ ok: true, result: { ok: false, errorCode: 'INSTANCE_FAILED' } });
    expect(JSON.parse(readFileSync(join(stateDir, 'instances/vm-2.json'), 'utf8'))).toMatchObject({ settled: false, firstApplied: false });
    expect(statSync(join(stateDir, 'instances/vm-2.userdata')).mode & 0o777).toBe(0o600);

    // The plugin host restarts it; the host applies the unsettled spec again, user data included (it never arrived).
    await expect.poll(() => reported('vm-2'), { timeout: 15_000 }).toMatchObject({ state: 'running', message: `pid ${pid}` });
    expect(pluginEntries()['vm-2']).toMatchObject({ pid, userDataApplies: 2, lastUserData: userData });
    expect(existsSync(join(stateDir, 'instances/vm-2.userdata'))).toBe(false);

    // The instance dies while bcd node is down; the next start brings it back, without user data this time.
    await agent.stop();
    process.kill(pid!, 'SIGKILL');
    await expect.poll(() => processAlive(pid), { timeout: 5_000 }).toBe(false);
    await startAgent();
    await expect.poll(() => processAlive(pluginEntries()['vm-2']?.pid), { timeout: 15_000 }).toBe(true);
    expect(pluginEntries()['vm-2']).toMatchObject({ userDataApplies: 2 });
    expect(pluginEntries()['vm-2']!.pid).not.toBe(pid);
    await expect.poll(() => reported('vm-2'), { timeout: 5_000 }).toMatchObject({ state: 'running', message: `pid ${pluginEntries()['vm-2']!.pid}` });
    expect(await run('instance.remove', { id: 'vm-2' })).toMatchObject({ ok: true, result: { ok: true, payload: { removed: true } } });
  }, 60_000);
});
