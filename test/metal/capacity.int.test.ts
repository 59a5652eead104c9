import { describe, expect, it } from 'vitest';
import { getNode } from '../../projections/nodes/queries.ts';
import { deployPayload, enrollPayload, startEngine } from './engineFixture.ts';
import { startFakeAgent } from './fakeAgent.ts';

describe('workflow engine limits', () => {
  it('queues a deploy beyond the site cap as waiting-for-capacity and starts it when a slot frees', async () => {
    await using env = await startEngine({ maxDeploysPerSite: 1 });
    await using _agent = await startFakeAgent(env.nc, 'dc1', { delayMs: { 'image.write': 800 } });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    for (const id of ['c1', 'c2']) await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(id), actor: 'test' });
    for (const id of ['c1', 'c2']) await env.waitForNode(id, (s) => s.exists && s.state === 'ready');

    await env.bus.execute({ name: 'metal.deploy', payload: deployPayload('c1'), actor: 'test' });
    const second = await env.bus.execute({ name: 'metal.deploy', payload: deployPayload('c2'), actor: 'test' });
    const nodes = env.readers.get('nodes')!;
    await nodes.waitFor(second.seq, 5_000);
    expect(getNode(nodes.db(), 'c2')).toMatchObject({ state: 'deploying', operation: 'deploy', waitingReason: 'waiting-for-capacity' });
    expect(env.orchestrator.model.inFlight('dc1', 'deploys')).toBe(1);

    await env.waitForNode('c1', (s) => s.exists && s.state === 'deployed');
    await env.waitForNode('c2', (s) => s.exists && s.state === 'deployed');
    await nodes.waitFor(await env.store.streamLastSequence(), 5_000);
    expect(getNode(nodes.db(), 'c2')).toMatchObject({ state: 'deployed', waitingReason: null, workflowId: null });
  });

  it('runs no more workflows across the fleet than its cap, inspections and deploys of both sites alike, and finishes them all', async () => {
    await using env = await startEngine({ maxWorkflowsInFlight: 1 });
    await using _dc1 = await startFakeAgent(env.nc, 'dc1');
    await using _dc2 = await startFakeAgent(env.nc, 'dc2');
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, env.orchestrator.model.workflowsInFlight)), 5);
    try {
      for (const siteId of ['dc1', 'dc2']) await env.bus.execute({ name: 'site.create', payload: { siteId, name: siteId }, actor: 'test' });
      const nodes = [
        ['w1', 'dc1'],
        ['w2', 'dc2'],
        ['w3', 'dc1'],
      ] as const;
      for (const [id, siteId] of nodes) await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(id, siteId), actor: 'test' });
      for (const [id] of nodes) await env.waitForNode(id, (s) => s.exists && s.state === 'ready', 30_000);
      for (const [id] of nodes) await env.bus.execute({ name: 'metal.deploy', payload: deployPayload(id), actor: 'test' });
      for (const [id] of nodes) await env.waitForNode(id, (s) => s.exists && s.state === 'deployed', 30_000);
    } finally {
      clearInterval(watch);
    }
    expect(most).toBe(1);
    expect(env.orchestrator.model.workflowsInFlight).toBe(0);
  });

  it('retries a failing step up to its attempts, then fails the workflow and the node with the reason', async () => {
    await using env = await startEngine();
    await using agent = await startFakeAgent(env.nc, 'dc1', { failKinds: ['inventory.read'] });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('f1'), actor: 'test' });
    const failed = await env.waitForNode('f1', (s) => s.exists && s.state === 'failed', 30_000);
    expect(failed).toMatchObject({ maintenance: false, failed: { operation: 'inspect', failedStep: 'inventory.read' } });
    expect(failed.exists && failed.failed?.reason).toMatch(/AGENT_FAILED/);
    // One agent command per attempt, each a distinct id.
    expect([...agent.executed.keys()].sort()).toEqual([1, 2, 3].map((a) => expect.stringMatching(new RegExp(`-s0-a${a}$`))));

    await env.bus.execute({ name: 'metal.retry', payload: { nodeId: 'f1' }, actor: 'test' });
    await env.waitForNode('f1', (s) => s.exists && s.state === 'inspecting');
  });

  it('fails the step at its first attempt when the agent reports a permanent Redfish failure', async () => {
    await using env = await startEngine();
    await using agent = await startFakeAgent(env.nc, 'dc1', { failKinds: ['inventory.read'], failCode: 'REDFISH_UNSUPPORTED' });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('p1'), actor: 'test' });
    const failed = await env.waitForNode('p1', (s) => s.exists && s.state === 'failed', 30_000);
    expect(failed.exists && failed.failed?.reason).toMatch(/REDFISH_UNSUPPORTED/);
    expect([...agent.executed.keys()]).toEqual([expect.stringMatching(/-s0-a1$/)]);
  });
});

describe('orchestrator restart', () => {
  // A restart can leave one event to come back only after the orchestrator's ack wait (30 s): allow for it.
  it('keeps the queue and caps across a restart and finishes every deploy', { timeout: 150_000 }, async () => {
    await using env = await startEngine({ maxDeploysPerSite: 1 });
    await using agent = await startFakeAgent(env.nc, 'dc1', { delayMs: { 'image.write': 600 } });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    for (const id of ['r1', 'r2']) await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(id), actor: 'test' });
    for (const id of ['r1', 'r2']) await env.waitForNode(id, (s) => s.exists && s.state === 'ready');
    for (const id of ['r1', 'r2']) await env.bus.execute({ name: 'metal.deploy', payload: deployPayload(id), actor: 'test' });
    await env.waitForNode('r1', (s) => s.exists && s.state === 'deploying');
    await env.restartOrchestrator();
    expect(env.orchestrator.model.inFlight('dc1', 'deploys')).toBe(1);
    await env.waitForNode('r1', (s) => s.exists && s.state === 'deployed', 60_000);
    await env.waitForNode('r2', (s) => s.exists && s.state === 'deployed', 60_000);
    expect([...agent.executed.values()].every((n) => n === 1)).toBe(true);
  });
});
