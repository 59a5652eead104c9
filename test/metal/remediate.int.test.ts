import { describe, expect, it } from 'vitest';
import { getNode } from '../../projections/nodes/queries.ts';
import { PLAN_ACTION_INPUT, PLAN_DIGEST_INPUT, planDigestOf, remediationPlan } from '../../schemas/autonomy/plan.ts';
import { deployPayload, enrollPayload, startEngine } from './engineFixture.ts';
import { startFakeAgent } from './fakeAgent.ts';

type Engine = Awaited<ReturnType<typeof startEngine>>;

async function enrollReady(env: Engine, nodeId: string) {
  await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' }).catch(() => undefined);
  await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), actor: 'test' });
  return env.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
}

const workflowOf = (result: { events: readonly { data: unknown }[] }) => (result.events[0]!.data as { workflowId: string }).workflowId;

describe('metal.remediate', () => {
  it('runs a profile on a deployed node and on a ready node, and returns each to where it was', async () => {
    await using env = await startEngine();
    await using _agent = await startFakeAgent(env.nc, 'dc1');
    await enrollReady(env, 'n1');
    await enrollReady(env, 'n2');
    await env.bus.execute({ name: 'metal.deploy', payload: deployPayload('n1'), actor: 'test' });
    await env.waitForNode('n1', (s) => s.exists && s.state === 'deployed');

    // A destructive profile (power-cycle) where destruction is allowed, on the deployed node; a harmless one on the ready node.
    const deployed = await env.bus.execute({
      name: 'metal.remediate',
      payload: { nodeId: 'n1', profile: 'power-cycle', allowDestructive: true },
      actor: 'test',
    });
    const ready = await env.bus.execute({ name: 'metal.remediate', payload: { nodeId: 'n2', profile: 'bmc-check' }, actor: 'test' });
    expect(deployed.events[0]).toMatchObject({ type: 'NodeOperationRequested', data: { operation: 'remediate' } });

    const n1 = await env.waitForNode('n1', (s) => s.exists && s.state === 'deployed' && s.current === null && s.failed === null);
    const n2 = await env.waitForNode('n2', (s) => s.exists && s.state === 'ready' && s.current === null && s.failed === null);
    // The deployed node keeps its tenant-facing state; the ready one stays free.
    expect(n1).toMatchObject({ state: 'deployed' });
    expect(n2).toMatchObject({ state: 'ready', owner: null });

    const last = await env.store.streamLastSequence();
    const workflows = env.readers.get('workflows')!;
    await workflows.waitFor(last, 5_000);
    const rows = workflows
      .db()
      .prepare(`SELECT workflow_id, node_id, operation, state, profile_id FROM workflows WHERE operation = 'remediate' ORDER BY node_id`)
      .all();
    expect(rows).toEqual([
      { workflow_id: workflowOf(deployed), node_id: 'n1', operation: 'remediate', state: 'completed', profile_id: 'power-cycle' },
      { workflow_id: workflowOf(ready), node_id: 'n2', operation: 'remediate', state: 'completed', profile_id: 'bmc-check' },
    ]);
    const nodes = env.readers.get('nodes')!;
    await nodes.waitFor(last, 5_000);
    expect(getNode(nodes.db(), 'n1')).toMatchObject({ state: 'deployed', workflowId: null, failure: null });
    expect(getNode(nodes.db(), 'n2')).toMatchObject({ state: 'ready', workflowId: null, failure: null });
  });

  it('refuses a destructive profile unless destruction is allowed, and a node that is not at rest', async () => {
    await using env = await startEngine();
    await using _agent = await startFakeAgent(env.nc, 'dc1');
    await enrollReady(env, 'n3');
    const before = await env.store.streamLastSequence();
    await expect(env.bus.execute({ name: 'metal.remediate', payload: { nodeId: 'n3', profile: 'power-cycle' }, actor: 'test' })).rejects.toMatchObject({
      code: 'NOT_PERMITTED',
    });
    await expect(env.bus.execute({ name: 'metal.remediate', payload: { nodeId: 'n3', profile: 'release' }, actor: 'test' })).rejects.toMatchObject({
      code: 'NOT_PERMITTED',
    });
    await expect(env.bus.execute({ name: 'metal.remediate', payload: { nodeId: 'n3', profile: 'no-such' }, actor: 'test' })).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
    });
    expect(await env.store.streamLastSequence()).toBe(before);

    // In rescue (or on its way there) the node is not at rest: nothing to return to.
    await env.bus.execute({ name: 'metal.rescue', payload: { nodeId: 'n3' }, actor: 'test' });
    await expect(env.bus.execute({ name: 'metal.remediate', payload: { nodeId: 'n3', profile: 'bmc-check' }, actor: 'test' })).rejects.toMatchObject({
      code: 'ILLEGAL_TRANSITION',
    });
  });

  it('starts only the approved plan: a remediation whose digest names another profile is refused at workflow.start', async () => {
    await using env = await startEngine();
    await using _agent = await startFakeAgent(env.nc, 'dc1');
    const approvedOther = planDigestOf(remediationPlan('n4', 'power-cycle'));
    const start = (profile: string) => ({
      workflowId: 'wf-00000000000' + (profile === 'bmc-check' ? '1' : '2'),
      nodeId: 'n4',
      siteId: 'dc1',
      operation: 'remediate',
      inputs: { profile, [PLAN_DIGEST_INPUT]: approvedOther, [PLAN_ACTION_INPUT]: 'metal.remediate' },
    });
    const before = await env.store.streamLastSequence();
    await expect(env.bus.execute({ name: 'workflow.start', payload: start('bmc-check'), actor: 'engine' })).rejects.toMatchObject({
      code: 'PLAN_DIGEST_MISMATCH',
    });
    expect(await env.store.streamLastSequence()).toBe(before);
    // The profile approved (destructive, and its request did not allow destruction) fails the destructive check instead.
    await expect(env.bus.execute({ name: 'workflow.start', payload: start('power-cycle'), actor: 'engine' })).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
    });

    await enrollReady(env, 'n5');
    const approved = planDigestOf(remediationPlan('n5', 'bmc-check'));
    await env.bus.execute({ name: 'metal.remediate', payload: { nodeId: 'n5', profile: 'bmc-check', approvedPlanDigest: approved }, actor: 'test' });
    await env.waitForNode('n5', (s) => s.exists && s.state === 'ready' && s.current === null && s.failed === null);
  });
});
