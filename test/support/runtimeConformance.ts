/**
 * The runtime conformance suite (issue 36): what every bcx `runtime` plugin must do when `bcd node` runs it, asserted
 * through a real nats-server, a real `bcd node` agent (`startNodeAgent`) and the plugin started from a pinned plugins
 * folder, exactly as the daemon runs it. One call registers the cases in the calling test file:
 *
 * ```ts
 * runtimeConformance('process-runtime', async () => ({ runtime: 'process-runtime', running, images, ... }));
 * ```
 *
 * The setup (`RuntimeUnderTest`) runs once in `beforeAll`; it starts the plugins folder holding the runtime and gives
 * the suite a few probes that look at instances from outside the plugin, so a runtime cannot pass by reporting what
 * it wishes were true. Its `[Symbol.asyncDispose]` runs in `afterAll`, after the agent and the plugins stopped; it
 * must kill whatever workloads are left. The cases:
 * - running, idempotent re-apply (same workload, user data on the first apply only and readable inside), stopped,
 *   removed, a redelivered remove;
 * - an unknown runtime refused (`RUNTIME_NOT_LOADED`, nothing journaled), an image that fails answered as
 *   `state: 'error'` → `INSTANCE_FAILED` and reported so;
 * - the plugin killed mid-apply: the command fails, the journal keeps the spec unsettled with its user data (0600),
 *   and after the plugin's restart `bcd node` converges it, user data delivered; then the workload dies while
 *   `bcd node` is down and the next start brings it back;
 * - with `warmStart`: a warm slot prepared stopped (no workload), taken by an instance whose first running apply
 *   starts it with its user data.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlugins } from '../../daemon/bcx/pluginsFolder.ts';
import { startNodeAgent, type NodeAgent } from '../../daemon/node/nodeAgent.ts';
import { heartbeatSignedBy, openAgentHeartbeat, type AgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { agentCommand, log, startAgentBackbone } from './agentBackbone.ts';

export interface RuntimeUnderTest extends AsyncDisposable {
  /** The runtime's plugin id (the `runtime` of an instance spec). */
  readonly runtime: string;
  /** The plugins folder holding it, started as `bcd node` starts it (privileged if it needs to be). */
  readonly running: RunningPlugins;
  /**
   * Image refs: `plain` boots and keeps running; `error` is answered `state: 'error'` with `errorMessage`; `slow` is
   * answered at least one second after its workload started (time for the suite to kill the plugin mid-apply).
   */
  readonly images: { readonly plain: string; readonly error: string; readonly slow: string };
  readonly errorMessage: string | RegExp;
  /** The addresses a running instance reports. */
  readonly addresses: readonly string[];
  /** The instance's workload as seen from outside the plugin (a pid, say): null while none runs. */
  workload(id: string): Promise<string | null>;
  /** The user data as the instance's workload can read it (null: none delivered). */
  userDataInside(id: string): Promise<string | null>;
  /** Kills the workload behind the runtime's back, as a crash would. */
  killWorkload(id: string): Promise<void>;
  /** The plugin's own process id, to kill it mid-apply. */
  pluginPid(): Promise<number>;
  /** The runtime declares `warm-start` (docs/bcx.md, "Warm slots"): the warm slot case runs. */
  readonly warmStart?: boolean;
  /** How many applies carried user data, if the runtime can tell (the recovery case asserts it exactly). */
  userDataApplies?(id: string): Promise<number>;
}

/** Every file under `dir`, recursively. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));

export function runtimeConformance(name: string, setup: () => Promise<RuntimeUnderTest>, options: { startTimeoutMs?: number } = {}): void {
  const wait = { timeout: options.startTimeoutMs ?? 15_000, interval: 100 };
  describe(`runtime conformance: ${name} run by bcd node`, () => {
    let env: Awaited<ReturnType<typeof startAgentBackbone>>;
    let rt: RuntimeUnderTest;
    let agent: NodeAgent | undefined;
    let lastBeat: AgentHeartbeat | undefined;
    const stateDir = mkdtempSync('/var/tmp/bc-node-instances-');
    const startAgent = async () => {
      agent = await startNodeAgent(env.nc, {
        siteId: 'dc1',
        nodeId: 'n1',
        stateDir,
        runtimes: () => rt.running.hosts.values(),
        reconcileIntervalMs: 200,
        heartbeatIntervalMs: 100,
        bootId: () => 'boot-a',
        log,
      });
      await agent.registered;
    };
    const spec = (id: string, desiredState: 'running' | 'stopped', extra: Record<string, unknown> = {}) => ({
      id,
      runtime: rt.runtime,
      flavor: { name: 'small', vcpus: 1, memoryMiB: 256, diskGiB: 1 },
      image: { ref: rt.images.plain },
      desiredState,
      ...extra,
    });
    const run = async (kind: 'instance.apply' | 'instance.remove', params: Record<string, unknown>) => {
      const command = agentCommand(kind, { params });
      await env.publish(command);
      return env.result(command, 60_000);
    };
    const reported = (id: string) => lastBeat?.instances?.find((i) => i.id === id);

    beforeAll(async () => {
      rt = await setup();
      expect(rt.running.unusable).toEqual([]);
      env = await startAgentBackbone();
      env.nc.subscribe(Subjects.agentHeartbeat('dc1', 'n1'), {
        callback: (_err, msg) => {
          const opened = openAgentHeartbeat(msg.json());
          // Only what the agent's registered key signed counts, as in the control plane's presence.
          if (opened && agent && heartbeatSignedBy(opened.signed, agent.publicKey)) lastBeat = opened.heartbeat;
        },
      });
      await startAgent();
    }, 60_000);
    afterAll(async () => {
      await agent?.stop();
      await rt?.running.stop();
      await rt?.[Symbol.asyncDispose]();
      await env?.[Symbol.asyncDispose]();
      rmSync(stateDir, { recursive: true, force: true });
    }, 60_000);

    it('applies running, then stopped, idempotently; user data on the first apply only, read inside, never kept; removes', async () => {
      const userData = '#cloud-config\nsecret: ud-only-once-7f3a\n';
      const first = await run('instance.apply', spec('vm-1', 'running', { userData }));
      expect(first).toMatchObject({
        ok: true,
        result: { ok: true, payload: { runtime: rt.runtime, status: { id: 'vm-1', state: 'running', addresses: rt.addresses }, userDataDelivered: true } },
      });
      const workload = await rt.workload('vm-1');
      expect(workload).not.toBeNull();
      expect(await rt.userDataInside('vm-1')).toBe(userData);
      // Answered: the host keeps no copy of the user data anywhere in its state.
      for (const file of filesUnder(stateDir)) expect(readFileSync(file, 'utf8')).not.toContain('ud-only-once');
      await expect
        .poll(() => reported('vm-1'), wait)
        .toMatchObject({ id: 'vm-1', runtime: rt.runtime, desiredState: 'running', state: 'running', addresses: rt.addresses });

      // Applied again (user data sent again by the control plane): the same workload, and no user data passed on.
      const again = await run('instance.apply', spec('vm-1', 'running', { userData: 'not-passed-on' }));
      expect(again).toMatchObject({ ok: true, result: { ok: true, payload: { status: { state: 'running' }, userDataDelivered: false } } });
      expect(await rt.workload('vm-1')).toBe(workload);
      expect(await rt.userDataInside('vm-1')).toBe(userData);
      if (rt.userDataApplies) expect(await rt.userDataApplies('vm-1')).toBe(1);

      const stopped = await run('instance.apply', spec('vm-1', 'stopped'));
      expect(stopped).toMatchObject({ ok: true, result: { ok: true, payload: { status: { state: 'stopped', addresses: [] } } } });
      expect(await rt.workload('vm-1')).toBeNull();
      await expect.poll(() => reported('vm-1')?.state, wait).toBe('stopped');
      // Stopped again: nothing to do, still stopped.
      expect(await run('instance.apply', spec('vm-1', 'stopped'))).toMatchObject({ ok: true, result: { ok: true, payload: { status: { state: 'stopped' } } } });

      expect(await run('instance.remove', { id: 'vm-1' })).toMatchObject({ ok: true, result: { ok: true, payload: { id: 'vm-1', removed: true } } });
      expect(existsSync(join(stateDir, 'instances/vm-1.json'))).toBe(false);
      await expect.poll(() => reported('vm-1'), wait).toBeUndefined();
      // A redelivered remove finds nothing to do.
      expect(await run('instance.remove', { id: 'vm-1' })).toMatchObject({ ok: true, result: { ok: true, payload: { removed: false } } });
    }, 120_000);

    it('refuses a runtime that is not loaded, and fails an instance the runtime answers in error', async () => {
      const unknown = await run('instance.apply', { ...spec('vm-x', 'running'), runtime: 'firecracker' });
      expect(unknown).toMatchObject({ ok: true, result: { ok: false, errorCode: 'RUNTIME_NOT_LOADED' } });
      expect(existsSync(join(stateDir, 'instances/vm-x.json'))).toBe(false);

      const broken = await run('instance.apply', spec('vm-e', 'running', { image: { ref: rt.images.error } }));
      expect(broken).toMatchObject({ ok: true, result: { ok: false, errorCode: 'INSTANCE_FAILED' } });
      await expect.poll(() => reported('vm-e'), wait).toMatchObject({ state: 'error', message: expect.stringMatching(rt.errorMessage) });
      expect(await run('instance.remove', { id: 'vm-e' })).toMatchObject({ ok: true, result: { ok: true, payload: { removed: true } } });
    }, 120_000);

    it('recovers an apply the plugin died in from the journal, and reconciles again when bcd node restarts', async () => {
      const userData = 'ud-of-vm-2';
      const command = agentCommand('instance.apply', { params: spec('vm-2', 'running', { userData, image: { ref: rt.images.slow } }) });
      await env.publish(command);
      // The plugin started the workload and is still in its apply: killed now, it never answers.
      await expect.poll(() => rt.workload('vm-2'), wait).not.toBeNull();
      const workload = await rt.workload('vm-2');
      process.kill(await rt.pluginPid(), 'SIGKILL');
      expect(await env.result(command, 60_000)).toMatchObject({ ok: true, result: { ok: false, errorCode: 'INSTANCE_FAILED' } });
      expect(JSON.parse(readFileSync(join(stateDir, 'instances/vm-2.json'), 'utf8'))).toMatchObject({ settled: false, firstApplied: false });
      expect(statSync(join(stateDir, 'instances/vm-2.userdata')).mode & 0o777).toBe(0o600);

      // The plugin host restarts it; the host applies the unsettled spec again, user data included (it never arrived).
      await expect.poll(() => reported('vm-2'), { ...wait, timeout: wait.timeout + 15_000 }).toMatchObject({ state: 'running', addresses: rt.addresses });
      expect(await rt.workload('vm-2')).toBe(workload);
      expect(await rt.userDataInside('vm-2')).toBe(userData);
      if (rt.userDataApplies) expect(await rt.userDataApplies('vm-2')).toBe(2);
      expect(existsSync(join(stateDir, 'instances/vm-2.userdata'))).toBe(false);

      // The workload dies while bcd node is down; the next start brings it back, without user data this time.
      await agent!.stop();
      await rt.killWorkload('vm-2');
      await expect.poll(() => rt.workload('vm-2'), wait).toBeNull();
      await startAgent();
      await expect.poll(() => rt.workload('vm-2'), wait).not.toBeNull();
      expect(await rt.workload('vm-2')).not.toBe(workload);
      if (rt.userDataApplies) expect(await rt.userDataApplies('vm-2')).toBe(2);
      await expect.poll(() => reported('vm-2'), wait).toMatchObject({ state: 'running', addresses: rt.addresses });
      expect(await run('instance.remove', { id: 'vm-2' })).toMatchObject({ ok: true, result: { ok: true, payload: { removed: true } } });
      expect(await rt.workload('vm-2')).toBeNull();
    }, 180_000);

    it('warm-start: a slot prepared stopped is first started by the instance that takes it, with its user data', async () => {
      if (!rt.warmStart) {
        // A runtime without the feature refuses a slot, and the suite has nothing more to ask of it.
        expect(await run('instance.apply', spec('slot-1', 'stopped', { warm: true }))).toMatchObject({
          ok: true,
          result: { ok: false, errorCode: 'WARM_START_UNSUPPORTED' },
        });
        return;
      }
      const slot = await run('instance.apply', spec('slot-1', 'stopped', { warm: true }));
      expect(slot).toMatchObject({ ok: true, result: { ok: true, payload: { status: { id: 'slot-1', state: 'stopped' } } } });
      expect(await rt.workload('slot-1')).toBeNull();
      const userData = 'ud-of-the-slot-taker';
      const taken = await run('instance.apply', spec('vm-3', 'running', { fromSlot: 'slot-1', userData }));
      expect(taken).toMatchObject({ ok: true, result: { ok: true, payload: { status: { state: 'running' }, userDataDelivered: true } } });
      // The runtime knows the instance by the slot's id.
      expect(await rt.workload('slot-1')).not.toBeNull();
      expect(await rt.userDataInside('slot-1')).toBe(userData);
      await expect.poll(() => reported('vm-3'), wait).toMatchObject({ state: 'running', addresses: rt.addresses });
      expect(await run('instance.remove', { id: 'vm-3' })).toMatchObject({ ok: true, result: { ok: true, payload: { removed: true } } });
      expect(await rt.workload('slot-1')).toBeNull();
    }, 120_000);
  });
}
