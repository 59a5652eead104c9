import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { workflowRoutes } from '../../projections/workflows/routes.ts';
import { describe, expect, it } from 'vitest';
import { getNode } from '../../projections/nodes/queries.ts';
import { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { deployPayload, enrollPayload, startEngine } from './engineFixture.ts';
import { fakeInventoryOf, fakeWipeReport, startFakeAgent } from './fakeAgent.ts';

type Engine = Awaited<ReturnType<typeof startEngine>>;

async function enrollReady(env: Engine, nodeId: string) {
  await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
  await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), actor: 'test' });
  return env.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
}

/** How many times each agent command id was stored on BC_AGENT_COMMANDS. */
async function commandCounts(env: Engine): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const info = await env.store.jsm.streams.info(Streams.agentCommands.name);
  if (info.state.messages === 0) return counts;
  const consumer = await env.store.js.consumers.get(Streams.agentCommands.name, { deliver_policy: DeliverPolicy.All });
  for (let i = 0; i < info.state.messages; i++) {
    const m = await consumer.next({ expires: 2_000 });
    if (!m) break;
    const id = AgentCommand.parse(m.json()).commandId;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('metal lifecycle', () => {
  it('carries a node from enrolled through deploy and release back to ready with one attested wipe', async () => {
    await using env = await startEngine();
    await using _agent = await startFakeAgent(env.nc, 'dc1');
    const ready = await enrollReady(env, 'n1');
    expect(ready).toMatchObject({ state: 'ready', inventory: fakeInventoryOf('n1') });

    await env.bus.execute({ name: 'metal.deploy', payload: deployPayload('n1'), actor: 'test' });
    await env.waitForNode('n1', (s) => s.exists && s.state === 'deployed');
    const undeploy = await env.bus.execute({ name: 'metal.undeploy', payload: { nodeId: 'n1' }, actor: 'test' });
    await env.waitForNode('n1', (s) => s.exists && s.state === 'ready');

    const last = await env.store.streamLastSequence();
    const workflows = env.readers.get('workflows')!;
    await workflows.waitFor(last, 5_000);
    const db = workflows.db();
    expect(db.prepare(`SELECT operation, state FROM workflows WHERE node_id = 'n1' ORDER BY started_at`).all()).toEqual([
      { operation: 'inspect', state: 'completed' },
      { operation: 'deploy', state: 'completed' },
      { operation: 'release', state: 'completed' },
    ]);
    const wipes = db
      .prepare(
        `SELECT s.workflow_id FROM workflow_steps s JOIN workflows w USING (workflow_id)
         WHERE w.node_id = 'n1' AND s.step_id = 'disk.wipe' AND s.state = 'succeeded' AND json_extract(s.output, '$.attested') = 1`,
      )
      .all() as { workflow_id: string }[];
    expect(wipes).toHaveLength(1);
    expect(wipes[0]!.workflow_id).toBe((undeploy.events[0]!.data as { workflowId: string }).workflowId);

    const nodes = env.readers.get('nodes')!;
    await nodes.waitFor(last, 5_000);
    expect(getNode(nodes.db(), 'n1')).toMatchObject({
      state: 'ready',
      maintenance: false,
      workflowId: null,
      waitingReason: null,
      failure: null,
      inventory: fakeInventoryOf('n1'),
    });

    const app = Fastify().setValidatorCompiler(validatorCompiler).setSerializerCompiler(serializerCompiler);
    await app.register(workflowRoutes, { reader: workflows, waitTimeoutMs: 1_000 });
    const history = (await app.inject({ url: `/v1/nodes/n1/workflows?minSeq=${last}` })).json<{ items: { workflowId: string; operation: string }[] }>();
    expect(history.items.map((w) => w.operation)).toEqual(['release', 'deploy', 'inspect']);
    const release = await app.inject({ url: `/v1/workflows/${wipes[0]!.workflow_id}` });
    expect(release.statusCode).toBe(200);
    expect(release.json()).toMatchObject({
      state: 'completed',
      steps: [{}, {}, {}, { stepId: 'disk.wipe', output: { attested: true } }, { stepId: 'boot.clear' }, {}],
    });
    await app.close();
  });

  it('refuses a forged wipe result at the intake and records one stored behind its back; the release keeps waiting for a valid one instead of failing', async () => {
    await using env = await startEngine();
    await using agent = await startFakeAgent(env.nc, 'dc1', { forgeWipe: true });
    await enrollReady(env, 'n2');
    await env.bus.execute({ name: 'metal.deploy', payload: deployPayload('n2'), actor: 'test' });
    await env.waitForNode('n2', (s) => s.exists && s.state === 'deployed');
    await env.bus.execute({ name: 'metal.undeploy', payload: { nodeId: 'n2' }, actor: 'test' });
    await env.waitForNode('n2', (s) => s.exists && s.state === 'wiping');

    // The result intake refuses the forgery: nothing is stored, and the agent is told why.
    const refusedWipes = () => agent.refused.filter((r) => r.command.kind === 'disk.wipe');
    await expect.poll(() => refusedWipes().length, { timeout: 20_000 }).toBeGreaterThan(0);
    const { command, bytes, reason } = refusedWipes()[0]!;
    expect(reason).toMatch(/^RESULT_REFUSED: /);
    expect(agent.refused.filter((r) => r.command.kind !== 'disk.wipe')).toEqual([]);
    // Stored anyway (by a control-plane credential, the only kind that may write there), the executor still refuses it.
    await jetstream(env.nc).publish(Subjects.acceptedAgentResult('dc1', 'n2', command.commandId, command.nonce), bytes);
    const workflows = env.readers.get('workflows')!;
    const wipe = () => workflows.db().prepare(`SELECT state, error_code, rejected_results, output FROM workflow_steps WHERE step_id = 'disk.wipe'`).get();
    await expect
      .poll(async () => (await workflows.waitFor(await env.store.streamLastSequence(), 5_000), wipe()), { timeout: 20_000 })
      .toMatchObject({ rejected_results: 1 });
    // The forgery is on record, and it failed nothing: the step still waits (until its deadline) for the real ramdisk.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(wipe()).toEqual({ state: 'running', error_code: null, rejected_results: 1, output: null });
    expect(await env.nodeState('n2')).toMatchObject({ state: 'wiping', maintenance: false });
  });

  it.each([
    [
      'fewer bytes',
      { ...fakeWipeReport, disks: [{ ...fakeWipeReport.disks[0]!, verifiedBytes: fakeWipeReport.disks[0]!.sizeBytes - 4096 }] },
      /erased over \d+ of its \d+ bytes/,
    ],
    [
      'fewer disks',
      { ...fakeWipeReport, disks: [{ ...fakeWipeReport.disks[0]!, serial: 'OTHER' }] },
      /drive nvme0 \(serial D1, \d+ bytes\) is not in the wipe result/,
    ],
  ])('fails a release whose signed wipe covers %s than the inventory, leaving the node failed and in maintenance', async (_what, wipeReport, reason) => {
    await using env = await startEngine();
    await using _agent = await startFakeAgent(env.nc, 'dc1', { wipeReport });
    await enrollReady(env, 'n4');
    await env.bus.execute({ name: 'metal.deploy', payload: deployPayload('n4'), actor: 'test' });
    await env.waitForNode('n4', (s) => s.exists && s.state === 'deployed');
    await env.bus.execute({ name: 'metal.undeploy', payload: { nodeId: 'n4' }, actor: 'test' });
    const failed = await env.waitForNode('n4', (s) => s.exists && s.state === 'failed');
    expect(failed).toMatchObject({
      maintenance: true,
      maintenanceSource: 'platform',
      failed: { operation: 'release', failedStep: 'disk.wipe', reason: expect.stringMatching(reason) },
    });
  });

  it('retires a node through an attested wipe and a power-off, after which no verb moves it', async () => {
    await using env = await startEngine();
    await using agent = await startFakeAgent(env.nc, 'dc1');
    await enrollReady(env, 'n5');
    const retire = await env.bus.execute({ name: 'metal.retire', payload: { nodeId: 'n5' }, actor: 'test' });
    expect(retire.events).toMatchObject([{ type: 'NodeOperationRequested', data: { operation: 'retire' } }]);
    expect(await env.nodeState('n5')).toMatchObject({ state: 'retiring' });
    await env.waitForNode('n5', (s) => s.exists && s.state === 'retired');
    const workflowId = (retire.events[0]!.data as { workflowId: string }).workflowId;
    expect([...agent.executed.keys()].filter((id) => id.startsWith(workflowId)).sort()).toEqual(
      ['s0', 's1', 's3', 's4', 's5'].map((s) => `${workflowId}-${s}-a1`),
    );
    const last = await env.store.streamLastSequence();
    const workflows = env.readers.get('workflows')!;
    await workflows.waitFor(last, 5_000);
    expect(
      workflows
        .db()
        .prepare(`SELECT step_id, state, json_extract(output, '$.attested') AS attested FROM workflow_steps WHERE workflow_id = ? ORDER BY step_index`)
        .all(workflowId),
    ).toEqual([
      { step_id: 'boot.setOnce', state: 'succeeded', attested: null },
      { step_id: 'power.set', state: 'succeeded', attested: null },
      { step_id: 'wait.agentJoined', state: 'succeeded', attested: null },
      { step_id: 'disk.wipe', state: 'succeeded', attested: 1 },
      { step_id: 'boot.clear', state: 'succeeded', attested: null },
      { step_id: 'power.set', state: 'succeeded', attested: null },
    ]);
    await expect(env.bus.execute({ name: 'metal.rescue', payload: { nodeId: 'n5' }, actor: 'test' })).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });
    expect((await env.bus.execute({ name: 'metal.retire', payload: { nodeId: 'n5' }, actor: 'test' })).events).toEqual([]);
  });

  it('resumes a step after the executor stops mid-step without publishing any agent command twice', async () => {
    await using env = await startEngine();
    await using agent = await startFakeAgent(env.nc, 'dc1', { delayMs: { 'image.write': 1_500 } });
    await enrollReady(env, 'n3');
    await env.bus.execute({ name: 'metal.deploy', payload: deployPayload('n3'), actor: 'test' });
    for (const deadline = Date.now() + 20_000; ![...agent.executed.keys()].some((id) => id.endsWith('-s3-a1'));) {
      if (Date.now() > deadline) throw new Error('image.write never reached the agent');
      await new Promise((r) => setTimeout(r, 20));
    }
    await env.restartExecutor();
    await env.waitForNode('n3', (s) => s.exists && s.state === 'deployed');

    const counts = await commandCounts(env);
    // inventory.read, then boot.setOnce, power.set, image.write, userdata.write, boot.clear, power.set (wait.agentJoined is no agent command).
    expect(counts.size).toBe(7);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect([...agent.executed.values()].every((n) => n === 1)).toBe(true);
    const last = await env.store.streamLastSequence();
    const workflows = env.readers.get('workflows')!;
    await workflows.waitFor(last, 5_000);
    // The redelivered work resumed attempt 1 rather than starting a second one.
    expect(workflows.db().prepare(`SELECT state, attempts FROM workflow_steps WHERE step_id = 'image.write'`).get()).toEqual({
      state: 'succeeded',
      attempts: 1,
    });
  });
});
