import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { autonomyCommandId, decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { Streams } from '../../schemas/subjects.ts';
import { firstLaneBindings } from '../../services/autonomy/bindings.ts';
import { decisionAggregate } from '../../services/autonomy/decision/decision.ts';
import { PolicyCatalog } from '../../services/autonomy/policies.ts';
import { firstLaneSensors } from '../../services/autonomy/sensors/firstLanes.ts';
import { workflowIdFor } from '../../services/metal/node/lifecycle.ts';
import { AutonomyEngine } from '../../services/processes/autonomyEngine/engine.ts';
import { enrollPayload, startEngine } from '../metal/engineFixture.ts';
import { allOk, signalOf } from './autonomyFixture.ts';
import { publishPassOn, waitForEngine } from './passes.ts';

const operator = { actor: 'token:operator' };

describe('exactly once (acceptance 5)', () => {
  it('a double approval, a crash between approval and start, and redelivery give one WorkflowStarted per episode', async () => {
    await using env = await startEngine();
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, ...operator });
    await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), ...operator });
    const inspect = await env.bus.execute({ name: 'metal.startInspection', payload: { nodeId: 'n1' }, commandId: 'inspect-0001', actor: 'engine' });
    const firstWorkflow = (inspect.events[0]!.data as { workflowId: string }).workflowId;
    await env.bus.execute({
      name: 'metal.failOperation',
      payload: { nodeId: 'n1', workflowId: firstWorkflow, reason: 'BMC said no', failedStep: 'power.get' },
      actor: 'engine',
    });
    await env.waitForNode('n1', (s) => s.exists && s.state === 'failed');

    const options = {
      policies: new PolicyCatalog(),
      bindings: firstLaneBindings,
      sensors: firstLaneSensors,
      settleMs: 60_000,
      budget: 10,
      budgetWindowMs: 3_600_000,
    };
    const engineA = new AutonomyEngine(env.nc, env.store, options, env.log);
    await engineA.start();
    const failed = signalOf('node-failed', 'n1');
    await publishPassOn(env.nc, [failed], allOk);
    await waitForEngine(env.nc);
    const id = decisionIdOf('retry', 'n1');

    // Two approvers' clicks at once: one approval, the other refused as no longer pending.
    const approvals = await Promise.allSettled(
      [0, 1].map(() => env.bus.execute({ name: 'autonomy.approve', payload: { decisionId: id }, actor: 'token:approver' })),
    );
    expect(approvals.filter((a) => a.status === 'fulfilled')).toHaveLength(1);

    // The engine dies between approval and start: its remediation reached the log, its record of it did not.
    await engineA.stop();
    const remediateId = autonomyCommandId('remediate', id, 1);
    const decision = await env.bus.repository.load(decisionAggregate, id);
    const digest = (decision.state as { planDigest: string }).planDigest;
    await env.bus.execute({ name: 'metal.retry', payload: { nodeId: 'n1', approvedPlanDigest: digest }, commandId: remediateId, actor: 'engine' });

    // Two fresh replicas, and the same pass delivered twice.
    const engines = [new AutonomyEngine(env.nc, env.store, options, env.log), new AutonomyEngine(env.nc, env.store, options, env.log)];
    for (const e of engines) await e.start();
    const marker = await publishPassOn(env.nc, [failed], allOk);
    await publishPassOn(env.nc, [failed], allOk, marker.passId);
    await publishPassOn(env.nc, [failed], allOk);
    await waitForEngine(env.nc);
    for (const e of engines) await e.stop();

    const retryWorkflow = workflowIdFor('n1', remediateId);
    await env.waitForNode('n1', (s) => s.exists && s.current?.workflowId === retryWorkflow);
    const jsm = await jetstreamManager(env.nc);
    const deadline = Date.now() + 10_000;
    let started = 0;
    while (Date.now() < deadline) {
      started = 0;
      for await (const b of env.store.readAfter(`bc.evt.metal.workflow.${retryWorkflow}`, 0))
        started += b.batch.events.filter((e) => e.type === 'WorkflowStarted').length;
      if (started > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(started).toBe(1);
    const recorded = [];
    for await (const b of env.store.readAfter(`bc.evt.autonomy.decision.${id}`, 0))
      recorded.push(...b.batch.events.filter((e) => e.type === 'DecisionRemediationStarted'));
    expect(recorded).toHaveLength(1);
    const info = await jsm.streams.info(Streams.events.name, { subjects_filter: 'bc.evt.metal.workflow.*' });
    // The inspection that failed and the one retry: no third workflow.
    expect(Object.keys(info.state.subjects ?? {}).sort()).toEqual([firstWorkflow, retryWorkflow].map((w) => `bc.evt.metal.workflow.${w}`).sort());
  });
});
