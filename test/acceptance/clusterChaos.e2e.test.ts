import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { openLeaseBucket, readLease } from '../../services/platform/lease/leaderLease.ts';
import { apiClient } from '../support/apiClient.ts';
import { attestedWipesPerRelease, destructiveCommandsTwice, workflowsByState } from '../support/crashEvidence.ts';
import { whileFailingOver } from '../support/failover.ts';
import { startImageServer } from '../support/imageServer.ts';
import { startProcessStack } from '../support/processStack.ts';
import { openReadModel } from '../support/readModelDb.ts';
import { rebuiltAndLiveReadModels } from './readModelRebuild.ts';

/**
 * CI-sized by default: 4 machines cross every boundary the kills need. `BC_CHAOS_MACHINES=20` runs the 20
 * (300 s once on 2 cores shared at a load average near 40); the waits below grow with the count.
 */
const MACHINES = chaosMachines(process.env.BC_CHAOS_MACHINES);
/** Per machine on top of a fixed budget: enrolment, inspection, deploy and release queue behind the per-site caps. */
const budget = (fixedMs: number, perMachineMs: number) => fixedMs + MACHINES * perMachineMs;
const machines = Array.from({ length: MACHINES }, (_, i) => `sim-m${String(i + 1).padStart(3, '0')}`);

describe('chaos on a 3-node cluster', () => {
  it(
    'deploys and releases every machine through kill -9 of a NATS node, of the leading orchestrator and of an executor replica: one attested wipe per release, no destructive command twice, read models equal to a rebuild',
    { timeout: budget(480_000, 30_000) },
    async () => {
      await using image = await startImageServer();
      await using stack = await startProcessStack({ layout: 'replicated', machines: MACHINES, cluster: true, env: { BC_LEASE_MS: '5000' } });
      const cluster = stack.cluster!;
      const nc = await stack.connect('chaos-observer');
      const client = apiClient(stack.api, stack.token);
      const succeededSteps = (operation: string) => {
        using db = openReadModel(stack.dataDir, 'workflows');
        return (
          (db
            .prepare("SELECT count(*) FROM workflow_steps s JOIN workflows w USING (workflow_id) WHERE w.operation = ? AND s.state = 'succeeded'")
            .pluck()
            .get(operation) as number) ?? 0
        );
      };
      /** Every machine in `state`; on a timeout, the unfinished steps and the processes' logs say why. */
      const settle = async (state: string, kills: string[]) => {
        try {
          for (const m of machines) await client.waitForNodeState(m, state, budget(150_000, 10_000));
        } catch (err) {
          using db = openReadModel(stack.dataDir, 'workflows');
          const open = db
            .prepare(
              "SELECT w.workflow_id, w.operation, s.step_index, s.step_id, s.state, s.attempts, s.error_code FROM workflow_steps s JOIN workflows w USING (workflow_id) WHERE w.state != 'completed' AND s.state != 'pending'",
            )
            .all();
          throw new Error(`${String(err)}; kills ${JSON.stringify(kills)}; open steps ${JSON.stringify(open)}\n${stack.logs()}`);
        }
      };
      const leaderPid = async () =>
        Number((await whileFailingOver(async () => readLease(await openLeaseBucket(nc), 'workflow-orchestrator')))?.record.holder.split(':')[1]);
      try {
        for (const m of machines) await client.waitForNodeState(m, 'ready', budget(150_000, 10_000));

        for (const nodeId of machines) {
          const deploy = await client.command('metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: [] });
          expect(deploy.status, JSON.stringify(deploy.body)).toBe(201);
        }
        // Kills at step boundaries of the deploys (6 steps each): a NATS node, then the leading orchestrator, then an executor.
        const total = MACHINES * 6;
        const kills: string[] = [];
        const jsm = await jetstreamManager(nc);
        for (const deadline = Date.now() + budget(240_000, 15_000); kills.length < 3; await sleep(50)) {
          if (Date.now() > deadline) throw new Error(`deploys stalled after kills ${JSON.stringify(kills)}\n${stack.logs()}`);
          const done = succeededSteps('deploy');
          if (kills.length === 0 && done >= Math.ceil(total / 6)) {
            const leader = (await whileFailingOver(() => jsm.streams.info('BC_EVENTS'))).cluster?.leader;
            await cluster.nodes.find((n) => n.name === leader)!.server.kill();
            kills.push(`nats ${leader} at ${done}`);
          } else if (kills.length === 1 && done >= Math.ceil(total / 3)) {
            const pid = await leaderPid();
            const leading = [stack.processes.orchestratorA, stack.processes.orchestratorB].find((p) => p.pid === pid);
            // Between two terms (the lease lapsed while the cluster failed over) no orchestrator holds it: look again.
            if (!leading) continue;
            await leading.kill();
            kills.push(`orchestrator ${pid} at ${done}`);
          } else if (kills.length === 2 && done >= Math.ceil(total / 2)) {
            await stack.processes.executorA.kill();
            kills.push(`executor at ${done}`);
          }
        }
        await settle('deployed', kills);

        // Everything killed comes back (the orchestrator as a standby), and every machine is released.
        await Promise.all(cluster.nodes.filter((n) => kills[0]!.includes(n.name)).map((n) => n.server.restart()));
        for (const p of [stack.processes.orchestratorA, stack.processes.orchestratorB, stack.processes.executorA])
          if (p.exitCode !== null || p.pid === undefined || !isAlive(p.pid)) await p.restart();
        for (const nodeId of machines) {
          const release = await client.command('metal.undeploy', { nodeId });
          expect(release.status, JSON.stringify(release.body)).toBe(201);
        }
        await settle('ready', kills);

        // Every workflow completed; each release has exactly one attested wipe.
        const all = { completed: MACHINES };
        expect(workflowsByState(stack.dataDir)).toEqual({ inspect: all, deploy: all, release: all });
        const wipes = attestedWipesPerRelease(stack.dataDir);
        expect(wipes).toHaveLength(MACHINES);
        expect(wipes.map((w) => w.attested)).toEqual(wipes.map(() => 1));
        // No destructive command published twice: each message id once in BC_AGENT_COMMANDS, each destructive step's
        // commands one per attempt it made.
        const twice = await destructiveCommandsTwice(nc, stack.dataDir);
        expect(twice.destructiveStored).toBeGreaterThanOrEqual(MACHINES * 6);
        expect([twice.msgIdsStoredTwice, twice.overSent]).toEqual([[], []]);

        // No event lost: read models rebuilt from the log equal the live ones.
        const { rebuilt, live } = await rebuiltAndLiveReadModels({ nc, dataDir: stack.dataDir, natsUrl: stack.nats.url, client });
        expect(rebuilt).toEqual(live);
        expect(kills).toHaveLength(3);
        // Which run this was (the machine count comes from the environment), for whoever reads the output.
        console.info(`chaos on ${MACHINES} machines: kills ${JSON.stringify(kills)}`);
      } finally {
        await nc.close();
      }
    },
  );
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function chaosMachines(raw: string | undefined): number {
  const n = Number(raw ?? 4);
  if (!Number.isInteger(n) || n < 1) throw new Error(`BC_CHAOS_MACHINES must be a whole number of machines, not ${raw}`);
  return n;
}
