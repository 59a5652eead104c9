import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { apiClient } from '../support/apiClient.ts';
import { deployEvidence, stepIndexOf, workflowSteps } from '../support/deployEvidence.ts';
import { startImageServer } from '../support/imageServer.ts';
import { startProcessStack } from '../support/processStack.ts';
import { readPrefix } from '../support/diskFile.ts';

const siteId = 'sim';
const nodeId = 'sim-m001';

describe('workflow executor SIGKILLed throughout a deploy', () => {
  it(
    'executor resumes the deploy after a kill at every step boundary and inside each destructive step, running no destructive command twice',
    { timeout: 300_000 },
    async () => {
      await using image = await startImageServer();
      await using stack = await startProcessStack({ layout: 'split', machines: 1 });
      const nc = await stack.connect('acceptance-observer');
      try {
        const client = apiClient(stack.api, stack.token);
        await client.waitForNodeState(nodeId, 'ready', 60_000);
        const resetsBefore = (await stack.site.resets())[nodeId] ?? [];

        const deploy = await client.command('metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: [] });
        expect(deploy.status, JSON.stringify(deploy.body)).toBe(201);
        const workflowId: string = deploy.body.events.find((e: { type: string }) => e.type === 'NodeOperationRequested').data.workflowId;

        // Kill points: a step seen running or succeeded in the read model, and a destructive command reaching the agents' stream.
        const pending: string[] = [];
        const covered = new Set<string>();
        const onCommand = (data: Uint8Array) => {
          const command = JSON.parse(Buffer.from(data).toString('utf8')) as { commandId: string; destructive: boolean };
          const key = `s${stepIndexOf(command.commandId)}:command`;
          // A resumed attempt re-publishes its command (JetStream dedupes it); one kill per step is enough.
          if (command.destructive && command.commandId.startsWith(`${workflowId}-s`) && !covered.has(key) && !pending.includes(key)) pending.push(key);
        };
        for (const subject of ['bc.site.*.cmd.>', 'bc.site.*.node.*.cmd']) nc.subscribe(subject, { callback: (_err, msg) => onCommand(msg.data) });

        const kills: string[][] = [];
        const deadline = Date.now() + 240_000;
        for (;;) {
          const { state, steps } = workflowSteps(stack.dataDir, workflowId);
          for (const s of steps) {
            for (const seen of ['running', 'succeeded']) {
              const key = `s${s.step_index}:${seen}`;
              if (s.state === seen && !covered.has(key) && !pending.includes(key)) pending.push(key);
            }
          }
          if (pending.length > 0) {
            const batch = pending.splice(0);
            for (const key of batch) covered.add(key);
            kills.push(batch);
            await stack.processes.executor.restart();
            continue;
          }
          if (state === 'completed' || state === 'failed') break;
          if (Date.now() > deadline) throw new Error(`deploy did not finish; kills ${JSON.stringify(kills)}\n${stack.logs()}`);
          await sleep(10);
        }

        const deployed = await client.waitForNodeState(nodeId, 'deployed', 30_000);
        expect(deployed.state).toBe('deployed');
        const disk = join(stack.dataDir, 'sim', siteId, 'machines', nodeId, 'disk0.img');
        expect(readPrefix(disk, image.image.length).equals(image.image)).toBe(true);

        const evidence = await deployEvidence({ nc, dataDir: stack.dataDir, siteId, nodeId, workflowId });
        expect(evidence.state).toBe('completed');
        const destructiveSteps = evidence.steps.filter((s) => s.destructive === 1).map((s) => s.step_index);
        expect(evidence.steps.map((s) => s.step_id)).toEqual([
          'boot.setOnce',
          'power.set',
          'wait.agentJoined',
          'image.write',
          'userdata.write',
          'boot.clear',
          'power.set',
        ]);
        expect(destructiveSteps).toEqual([1, 3, 6]);
        // Every boundary and every destructive command was a kill point; the executor process was started once per kill.
        for (const s of evidence.steps) expect(covered.has(`s${s.step_index}:succeeded`), `kill at s${s.step_index}:succeeded`).toBe(true);
        for (const i of destructiveSteps) expect(covered.has(`s${i}:command`), `kill inside s${i}`).toBe(true);
        expect(stack.processes.executor.starts).toBe(kills.length + 1);

        // One attempt per step, nothing rejected.
        expect(evidence.steps.map((s) => [s.state, s.attempts, s.rejected_results])).toEqual(evidence.steps.map(() => ['succeeded', 1, 0]));
        // BC_AGENT_COMMANDS: every message id stored once; this workflow's agent steps each stored exactly one command, attempt 1.
        const perMsgId = new Map<string, number>();
        for (const c of evidence.allStored) perMsgId.set(c.msgId, (perMsgId.get(c.msgId) ?? 0) + 1);
        expect([...perMsgId.values()].filter((n) => n !== 1)).toEqual([]);
        expect(evidence.stored.map((c) => c.msgId)).toEqual(evidence.stored.map((c) => c.commandId));
        const agentSteps = evidence.steps.filter((s) => s.step_id !== 'wait.agentJoined').map((s) => `${workflowId}-s${s.step_index}-a1`);
        expect(evidence.stored.map((c) => c.commandId).sort()).toEqual([...agentSteps].sort());
        // Journals: each destructive step reached an agent as exactly one command id, which finished ok (never INTERRUPTED).
        for (const i of destructiveSteps) {
          const rows = evidence.journal.filter((r) => stepIndexOf(r.commandId) === i);
          expect(rows.map((r) => [r.commandId, r.finished, r.ok, r.errorCode])).toEqual([[`${workflowId}-s${i}-a1`, true, true, '']]);
        }
        // BMC: the Reset requests the deploy caused are exactly those its two power.set results report.
        const resets = ((await stack.site.resets())[nodeId] ?? []).slice(resetsBefore.length);
        const reported = evidence.steps.filter((s) => s.step_id === 'power.set').flatMap((s) => (JSON.parse(s.output!) as { resetTypes: string[] }).resetTypes);
        expect(reported.length).toBeGreaterThanOrEqual(2);
        expect(resets).toEqual(reported);
      } finally {
        await nc.close();
      }
    },
  );
});
