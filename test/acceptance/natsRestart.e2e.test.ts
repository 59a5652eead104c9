import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { apiClient } from '../support/apiClient.ts';
import { storedAgentCommandAt, storedAgentCommands } from '../support/agentEvidence.ts';
import { deployEvidence, stepIndexOf, workflowSteps } from '../support/deployEvidence.ts';
import { startImageServer } from '../support/imageServer.ts';
import { startProcessStack } from '../support/processStack.ts';

const siteId = 'sim';
const nodeId = 'sim-m001';
/** Restart the nats-server inside these steps: both power cycles and the image write. */
const restartWhenRunning = [1, 3, 6];

describe('nats-server restarted during a deploy', () => {
  it('deploy completes across nats-server restarts inside its destructive steps, with every command and event kept once', { timeout: 240_000 }, async () => {
    await using image = await startImageServer();
    await using stack = await startProcessStack({ layout: 'split', machines: 1 });
    const client = apiClient(stack.api, stack.token);
    await client.waitForNodeState(nodeId, 'ready', 60_000);
    const resetsBefore = (await stack.site.resets())[nodeId] ?? [];

    // Where the deploy's commands will start, read before it is sent: the first may be stored before a late read.
    const observer = await stack.connect('acceptance-trigger');
    const restartedAt: number[] = [];
    let nextSeq = (await storedAgentCommands(observer)).reduce((max, c) => Math.max(max, c.seq), 0) + 1;
    const deploy = await client.command('metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: [] });
    expect(deploy.status, JSON.stringify(deploy.body)).toBe(201);
    const workflowId: string = deploy.body.events.find((e: { type: string }) => e.type === 'NodeOperationRequested').data.workflowId;

    // Restart points: a destructive command of this workflow stored in the agents' stream (the agent is about to run
    // it, the executor waits for its result). Read from the stream by sequence, so a command published while the
    // observer is still reconnecting after the previous restart is not missed.
    const deadline = Date.now() + 180_000;
    try {
      for (;;) {
        const command = await storedAgentCommandAt(observer, nextSeq, 250);
        if (command) {
          nextSeq++;
          const i = stepIndexOf(command.commandId);
          if (command.destructive && command.commandId.startsWith(`${workflowId}-s`) && !restartedAt.includes(i)) {
            restartedAt.push(i);
            await stack.nats.restart();
          }
          continue;
        }
        const { state } = workflowSteps(stack.dataDir, workflowId);
        if (state === 'completed' || state === 'failed') break;
        if (Date.now() > deadline) throw new Error(`deploy did not finish; restarts at ${JSON.stringify(restartedAt)}\n${stack.logs()}`);
        await sleep(10);
      }
    } finally {
      await observer.close();
    }
    expect(restartedAt).toEqual(restartWhenRunning);
    await client.waitForNodeState(nodeId, 'deployed', 30_000);

    const nc = await stack.connect('acceptance-observer');
    try {
      const evidence = await deployEvidence({ nc, dataDir: stack.dataDir, siteId, nodeId, workflowId });
      expect(evidence.state).toBe('completed');
      expect(evidence.steps.map((s) => [s.step_id, s.state, s.rejected_results])).toEqual(
        ['boot.setOnce', 'power.set', 'wait.agentJoined', 'image.write', 'userdata.write', 'boot.clear', 'power.set'].map((id) => [id, 'succeeded', 0]),
      );
      // Each message id once in BC_AGENT_COMMANDS; each destructive step reached an agent as one command, executed once, ok.
      const perMsgId = new Map<string, number>();
      for (const c of evidence.allStored) perMsgId.set(c.msgId, (perMsgId.get(c.msgId) ?? 0) + 1);
      expect([...perMsgId.values()].filter((n) => n !== 1)).toEqual([]);
      for (const i of restartWhenRunning) {
        const attempt = evidence.steps[i]!.attempts;
        expect(evidence.stored.filter((c) => stepIndexOf(c.commandId) === i).map((c) => c.commandId)).toEqual([`${workflowId}-s${i}-a${attempt}`]);
        const rows = evidence.journal.filter((r) => stepIndexOf(r.commandId) === i);
        expect(rows.map((r) => [r.commandId, r.finished, r.ok])).toEqual([[`${workflowId}-s${i}-a${attempt}`, true, true]]);
      }
      // The BMC saw exactly the resets the two power.set results report.
      const resets = ((await stack.site.resets())[nodeId] ?? []).slice(resetsBefore.length);
      const reported = evidence.steps.filter((s) => s.step_id === 'power.set').flatMap((s) => (JSON.parse(s.output!) as { resetTypes: string[] }).resetTypes);
      expect(resets).toEqual(reported);
      // Nothing lost from the log: the node's history ends with the deploy completing, and the read models caught up.
      const history = await client.getJson(`/v1/events?aggregate=metal.node/${nodeId}`);
      expect(history.items.at(-1)).toMatchObject({ type: 'NodeOperationCompleted', data: { operation: 'deploy', workflowId } });
      const ready = await fetch(`${stack.api}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      await nc.close();
    }
  });
});
