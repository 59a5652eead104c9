import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { allProjections } from '../../projections/catalog.ts';
import { Projector } from '../../projections/runtime/projector.ts';
import { ReadModelFiles } from '../../projections/runtime/readModelFiles.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { openLeaseBucket, readLease } from '../../services/platform/lease/leaderLease.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { dumpProjectors, waitForCheckpoint } from '../properties/harness.ts';
import { dumpTables } from '../properties/tables.ts';
import { storedAgentCommands } from '../support/agentEvidence.ts';
import { apiClient } from '../support/apiClient.ts';
import { stepIndexOf } from '../support/deployEvidence.ts';
import { startImageServer } from '../support/imageServer.ts';
import { startProcessStack } from '../support/processStack.ts';
import { openReadModel } from '../support/readModelDb.ts';
import { tempDir } from '../support/natsServer.ts';

/** CI-sized: the 20 machines take this many minutes on 2 shared cores; 4 cross every boundary the kills need. */
const MACHINES = 4;
const machines = Array.from({ length: MACHINES }, (_, i) => `sim-m${String(i + 1).padStart(3, '0')}`);

describe('chaos on a 3-node cluster', () => {
  it(
    'deploys and releases every machine through kill -9 of a NATS node, of the leading orchestrator and of an executor replica: one attested wipe per release, no destructive command twice, read models equal to a rebuild',
    { timeout: 600_000 },
    async () => {
      await using image = await startImageServer();
      await using stack = await startProcessStack({ layout: 'replicated', machines: MACHINES, cluster: true, env: { BC_LEASE_MS: '5000' } });
      const cluster = stack.cluster!;
      const nc = await connectNats(stack.nats.url, 'chaos-observer');
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
          for (const m of machines) await client.waitForNodeState(m, state, 180_000);
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
      const leaderPid = async () => Number((await readLease(await openLeaseBucket(nc), 'workflow-orchestrator'))?.record.holder.split(':')[1]);
      try {
        for (const m of machines) await client.waitForNodeState(m, 'ready', 180_000);

        for (const nodeId of machines) {
          const deploy = await client.command('metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: [] });
          expect(deploy.status, JSON.stringify(deploy.body)).toBe(201);
        }
        // Kills at step boundaries of the deploys (6 steps each): a NATS node, then the leading orchestrator, then an executor.
        const total = MACHINES * 6;
        const kills: string[] = [];
        const jsm = await jetstreamManager(nc);
        for (const deadline = Date.now() + 300_000; kills.length < 3; await sleep(50)) {
          if (Date.now() > deadline) throw new Error(`deploys stalled after kills ${JSON.stringify(kills)}\n${stack.logs()}`);
          const done = succeededSteps('deploy');
          if (kills.length === 0 && done >= Math.ceil(total / 6)) {
            const leader = (await jsm.streams.info('BC_EVENTS')).cluster?.leader;
            await cluster.nodes.find((n) => n.name === leader)!.server.kill();
            kills.push(`nats ${leader} at ${done}`);
          } else if (kills.length === 1 && done >= Math.ceil(total / 3)) {
            const pid = await leaderPid();
            const leading = [stack.processes.orchestratorA, stack.processes.orchestratorB].find((p) => p.pid === pid)!;
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
        {
          using db = openReadModel(stack.dataDir, 'workflows');
          const byState = db.prepare('SELECT operation, state, count(*) AS n FROM workflows GROUP BY operation, state ORDER BY operation').all();
          expect(byState).toEqual([
            { operation: 'deploy', state: 'completed', n: MACHINES },
            { operation: 'inspect', state: 'completed', n: MACHINES },
            { operation: 'release', state: 'completed', n: MACHINES },
          ]);
          const wipes = db
            .prepare(
              `SELECT w.workflow_id AS workflowId, count(s.step_index) AS attested FROM workflows w
               LEFT JOIN workflow_steps s ON s.workflow_id = w.workflow_id AND s.step_id = 'disk.wipe' AND s.state = 'succeeded' AND json_extract(s.output, '$.attested') = 1
             WHERE w.operation = 'release' GROUP BY w.workflow_id`,
            )
            .all() as { workflowId: string; attested: number }[];
          expect(wipes).toHaveLength(MACHINES);
          expect(wipes.map((w) => w.attested)).toEqual(wipes.map(() => 1));
          // No destructive command published twice: each message id once in BC_AGENT_COMMANDS, each destructive step's
          // commands one per attempt it made.
          const stored = await storedAgentCommands(nc);
          const perMsgId = new Map<string, number>();
          for (const c of stored) perMsgId.set(c.msgId, (perMsgId.get(c.msgId) ?? 0) + 1);
          expect([...perMsgId.entries()].filter(([, n]) => n !== 1)).toEqual([]);
          const steps = db.prepare('SELECT workflow_id AS workflowId, step_index AS stepIndex, attempts FROM workflow_steps WHERE destructive = 1').all() as {
            workflowId: string;
            stepIndex: number;
            attempts: number;
          }[];
          for (const s of steps) {
            const commands = stored.filter((c) => c.destructive && c.commandId.startsWith(`${s.workflowId}-s`) && stepIndexOf(c.commandId) === s.stepIndex);
            expect(commands.length, `${s.workflowId} s${s.stepIndex}`).toBeLessThanOrEqual(s.attempts);
            expect(new Set(commands.map((c) => c.commandId)).size).toBe(commands.length);
          }
        }

        // No event lost: read models rebuilt from the log equal the live ones.
        const config = loadConfig({}, { dataDir: stack.dataDir, natsUrl: stack.nats.url, natsAuth: 'none', logLevel: 'silent' });
        const store = await openEventStore(nc, config);
        const last = await store.streamLastSequence();
        using fresh = tempDir('bc-chaos-rebuild-');
        const log = createLogger('chaos', 'silent');
        const rebuilt = allProjections.map(
          (projection) =>
            new Projector(store, { ...projection, name: `${projection.name}_chaos` }, new ReadModelFiles(fresh.path, `${projection.name}_chaos`), log),
        );
        try {
          for (const p of rebuilt) await p.start();
          for (const p of rebuilt) await waitForCheckpoint(p, last, 60_000, store);
          const ready = await client.getJson('/readyz');
          for (let i = 0; ready.projections.some((p: { checkpoint: number }) => p.checkpoint < last); i++) {
            if (i > 200) throw new Error(`live read models behind ${last}: ${JSON.stringify(ready.projections)}`);
            await sleep(100);
            Object.assign(ready, await client.getJson('/readyz'));
          }
          const live = Object.fromEntries(
            allProjections.map((p) => {
              using db = openReadModel(stack.dataDir, p.name);
              return [p.name, dumpTables(db)];
            }),
          );
          const fromLog = Object.fromEntries(Object.entries(dumpProjectors(rebuilt)).map(([name, dump]) => [name.replace(/_chaos$/, ''), dump]));
          expect(fromLog).toEqual(live);
        } finally {
          for (const p of rebuilt) await p.stop();
        }
        expect(kills).toHaveLength(3);
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
