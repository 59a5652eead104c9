import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { apiClient } from '../support/apiClient.ts';
import { attestedWipesPerRelease, deployAttemptsAfterLostWrite, destructiveCommandsTwice, workflowsByState } from '../support/crashEvidence.ts';
import { stepIndexOf, workflowSteps } from '../support/deployEvidence.ts';
import { readPrefix } from '../support/diskFile.ts';
import { freePort } from '../support/freePort.ts';
import { startImageServer } from '../support/imageServer.ts';
import { startProcessStack } from '../support/processStack.ts';
import type { ServeProcess } from '../support/serveProcess.ts';
import { openReadModel } from '../support/readModelDb.ts';
import { rebuiltAndLiveReadModels } from './readModelRebuild.ts';
import { startSimulatedSiteProcess } from '../support/simulatedSiteProcess.ts';

const siteId = 'sim';
const nodeId = 'sim-m001';

type Operation = 'deploy' | 'release';
/**
 * What is killed: a control-plane process of the stack (by its group in the layout; `projectors`: every process that
 * runs a projector), or the whole simulated site (site agent, BMCs, machine, ramdisk).
 */
type Target = 'orchestrator' | 'commands' | 'projectors' | 'executor' | 'stepPath' | 'site';
/**
 * Fires once the agent command of `step` of the operation's workflow is published to the agents' stream (seen on
 * NATS, not in a read model that a dead projector holds back).
 */
interface KillPoint {
  operation: Operation;
  step: number;
  target: Target;
  /** Also wait until the image is part-way served: the command alone may still be queued for the ramdisk. */
  midDownload?: true;
}

/**
 * Kill points fire in order: each once its step's command is seen and the one before it fired (two on one step: the
 * second once the first process is back). Deploy steps: boot.setOnce, power.set, wait.agentJoined, image.write,
 * userdata.write, power.set; release steps: boot.setOnce, power.set, wait.agentJoined, disk.wipe, power.set.
 */
interface Scenario {
  layout: 'isolated' | 'compact';
  killPoints: readonly KillPoint[];
  /** The deploy's steps with their attempts, when the kills decide them. */
  deployAttempts?: readonly (readonly [string, number])[];
}

const scenarios: Record<string, Scenario> = {
  /**
   * Every control-plane process apart, each killed in turn. The projectors go last in each operation: the workflow
   * runs on while they restart. (The executor's deploy kills are in executorCrash.e2e.test.ts.)
   */
  'each control-plane process apart, and the site': {
    layout: 'isolated',
    killPoints: [
      { operation: 'deploy', step: 0, target: 'orchestrator' },
      { operation: 'deploy', step: 1, target: 'commands' },
      // The image trickles in for seconds: the site and the ramdisk writing it die mid-write.
      { operation: 'deploy', step: 3, target: 'site', midDownload: true },
      { operation: 'deploy', step: 4, target: 'projectors' },
      { operation: 'release', step: 0, target: 'orchestrator' },
      { operation: 'release', step: 0, target: 'executor' },
      { operation: 'release', step: 1, target: 'commands' },
      // The wipe command is on its way to the ramdisk (or the wipe is running, or just done) when the site dies.
      { operation: 'release', step: 3, target: 'site' },
      { operation: 'release', step: 4, target: 'projectors' },
    ],
    // The site died mid-write: its ramdisk was found lost, the machine booted again and the write ran as attempt 2.
    deployAttempts: deployAttemptsAfterLostWrite,
  },
  /**
   * The default layout's shared process (projectors, commands, join, orchestrator, executor): all five die at once,
   * four times: at the deploy's power.set, while the ramdisk writes the image, at the release's first step, and while
   * the wipe command is out.
   */
  'the step path sharing one process (BC_PROCESS_LAYOUT=compact)': {
    layout: 'compact',
    killPoints: [
      { operation: 'deploy', step: 1, target: 'stepPath' },
      { operation: 'deploy', step: 3, target: 'stepPath', midDownload: true },
      { operation: 'release', step: 0, target: 'stepPath' },
      { operation: 'release', step: 3, target: 'stepPath' },
    ],
  },
};

const terminal = new Set(['completed', 'failed', 'cancelled']);

describe('kill -9 of control-plane processes and of the site, during a deploy and during a release', () => {
  for (const [name, scenario] of Object.entries(scenarios)) {
    it(
      `${name}: every workflow completes, no destructive agent command is published twice, the release has one attested wipe, and the read models rebuilt from the log equal the live ones`,
      // Well under 3 minutes on an idle 2-core machine; minutes more when it is shared.
      { timeout: 600_000 },
      () => crashScenario(scenario),
    );
  }
});

async function crashScenario({ layout, killPoints, deployAttempts }: Scenario): Promise<void> {
  // 2 MiB at 256 KiB/s: each image.write runs about 8 s.
  await using image = await startImageServer(2 << 20, { bytesPerSecond: 256 << 10 });
  await using stack = await startProcessStack({
    layout,
    machines: 1,
    env: {
      // A fixed BMC port: the restarted site serves the machine at the address it was enrolled with.
      BC_SIM_BMC_PORT_BASE: String(await freePort()),
      BC_TEST_SIM_BMC_DELAY_MS: '50',
      // The dead ramdisk is found lost after 6 s of silence; a live one heartbeats every second.
      BC_TEST_SIM_HEARTBEAT_MS: '1000',
      BC_AGENT_HEARTBEAT_TIMEOUT_MS: '6000',
      // A killed orchestrator's lease lapses soon: the restarted one takes over.
      BC_LEASE_MS: '3000',
    },
  });
  const nc = await stack.connect('process-crash-observer');
  const sites = [stack.site];
  const client = apiClient(stack.api, stack.token);
  // The projector process(es), by the services they run (one per read model, or one for all).
  const processes = stack.processes as Record<string, ServeProcess>;
  const projectorProcesses = Object.values(processes).filter((p) => p.services.some((s) => s.startsWith('projector')));
  const processesOf = (target: Exclude<Target, 'site'>) => (target === 'projectors' ? projectorProcesses : [processes[target]!]);
  /**
   * Each target's kill resolves once it is gone; its comeback (a restart that may take many seconds on a busy
   * machine) runs on while the test waits for the next kill point, so a later kill is not held back behind it.
   */
  const crash = async (target: Target): Promise<() => Promise<void>> => {
    if (target !== 'site') {
      const killed = processesOf(target);
      await Promise.all(killed.map((p) => p.kill()));
      return async () => void (await Promise.all(killed.map((p) => p.restart())));
    }
    const site = sites.at(-1)!;
    const gone = new Promise((resolve) => site.child.once('exit', resolve));
    site.child.kill('SIGKILL');
    await gone;
    return async () => void sites.push(await startSimulatedSiteProcess(stack.env, 120_000));
  };
  const comebacks = new Map<Target, Promise<void>>();
  const kill = async (target: Target) => {
    await comebacks.get(target);
    const comeback = await crash(target);
    comebacks.set(target, comeback());
  };
  try {
    expect(projectorProcesses.length).toBeGreaterThan(0);
    for (const point of killPoints) if (point.target !== 'site') expect(processesOf(point.target).every(Boolean), point.target).toBe(true);
    await client.waitForNodeState(nodeId, 'ready', 120_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${stack.logs()}`);
    });
    // Agent commands seen on their way into BC_AGENT_COMMANDS, as `<workflowId> s<index>`.
    const commandsSeen = new Set<string>();
    for (const subject of ['bc.site.*.cmd.>', 'bc.site.*.node.*.cmd'])
      nc.subscribe(subject, {
        callback: (_err, msg) => {
          const { commandId } = msg.json<{ commandId: string }>();
          commandsSeen.add(`${commandId.replace(/-s\d+-a\d+$/, '')} s${stepIndexOf(commandId)}`);
        },
      });

    const fired: { point: KillPoint; atMs: number }[] = [];
    const workflowIds = {} as Record<Operation, string>;
    const run = async (operation: Operation, send: () => Promise<{ status: number; body: any }>, settled: string) => {
      const sent = await send();
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      const workflowId: string = sent.body.events.find((e: { type: string }) => e.type === 'NodeOperationRequested').data.workflowId;
      workflowIds[operation] = workflowId;
      const reached = (point: KillPoint) => commandsSeen.has(`${workflowId} s${point.step}`) && (!point.midDownload || image.bytesServed() > 0);
      for (const point of killPoints.filter((p) => p.operation === operation)) {
        for (const deadline = Date.now() + 120_000; !reached(point); await sleep(5)) {
          const { state } = workflowSteps(stack.dataDir, workflowId);
          if (Date.now() > deadline || (state !== undefined && terminal.has(state)))
            throw new Error(`${operation} is ${state} without reaching ${JSON.stringify(point)}; fired ${JSON.stringify(fired)}\n${stack.logs()}`);
        }
        if (point.midDownload && image.bytesServed() >= image.image.length)
          throw new Error(`the image was served whole before the kill at ${JSON.stringify(point)}`);
        fired.push({ point, atMs: Date.now() });
        await kill(point.target);
      }
      await Promise.all(comebacks.values());
      for (const deadline = Date.now() + 150_000; !terminal.has(workflowSteps(stack.dataDir, workflowId).state ?? 'running'); await sleep(100))
        if (Date.now() > deadline) throw new Error(`${operation} did not finish; fired ${JSON.stringify(fired)}\n${stack.logs()}`);
      await client.waitForNodeState(nodeId, settled, 60_000);
    };

    await run(
      'deploy',
      () => client.command('metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: [] }),
      'deployed',
    );
    expect(readPrefix(join(stack.dataDir, 'sim', siteId, 'machines', nodeId, 'disk0.img'), image.image.length).equals(image.image)).toBe(true);
    if (deployAttempts) expect(workflowSteps(stack.dataDir, workflowIds.deploy).steps.map((s) => [s.step_id, s.attempts])).toEqual(deployAttempts);
    await run('release', () => client.command('metal.undeploy', { nodeId }), 'ready');

    // Every kill point fired before its workflow ended (by the log's clock); each killed process started once per kill.
    expect(fired.map((f) => f.point)).toEqual(killPoints);
    for (const operation of ['deploy', 'release'] as const) {
      using db = openReadModel(stack.dataDir, 'workflows');
      const { ended_at: endedAt } = db.prepare('SELECT ended_at FROM workflows WHERE workflow_id = ?').get(workflowIds[operation]) as { ended_at: string };
      for (const f of fired.filter((x) => x.point.operation === operation)) expect(f.atMs, JSON.stringify(f.point)).toBeLessThan(Date.parse(endedAt));
    }
    const killsOf = (p: ServeProcess) => killPoints.filter((k) => k.target !== 'site' && processesOf(k.target).includes(p)).length;
    for (const [group, p] of Object.entries(processes)) expect(p.starts, group).toBe(1 + killsOf(p));
    expect(sites.length).toBe(1 + killPoints.filter((k) => k.target === 'site').length);

    // Every workflow completed; the release has exactly one attested wipe.
    expect(workflowsByState(stack.dataDir)).toEqual({ inspect: { completed: 1 }, deploy: { completed: 1 }, release: { completed: 1 } });
    expect(attestedWipesPerRelease(stack.dataDir)).toEqual([{ workflowId: workflowIds.release, attested: 1 }]);
    // No destructive agent command twice in BC_AGENT_COMMANDS (each at most once per attempt of its step).
    const twice = await destructiveCommandsTwice(nc, stack.dataDir);
    expect(twice.destructiveStored).toBeGreaterThanOrEqual(6);
    expect([twice.msgIdsStoredTwice, twice.overSent]).toEqual([[], []]);

    // No event lost: the read models rebuilt from the log equal the live ones.
    const { rebuilt, live } = await rebuiltAndLiveReadModels({ nc, dataDir: stack.dataDir, natsUrl: stack.nats.url, client });
    expect(rebuilt).toEqual(live);
    // When each kill landed (seconds after the first), for whoever reads the output.
    console.info(
      `process crash kills: ${fired.map((f) => `${f.point.operation} s${f.point.step} ${f.point.target} +${Math.round((f.atMs - fired[0]!.atMs) / 1000)}s`).join(', ')}`,
    );
  } finally {
    await nc.close();
    for (const site of sites.slice(1)) await site.stop();
  }
}
