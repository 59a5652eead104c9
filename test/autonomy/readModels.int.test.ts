import { describe, expect, it } from 'vitest';
import { longLivedAgentKeys } from '../../projections/agents/queries.ts';
import { defaultSensorSettings } from '../../services/autonomy/sensors/sensor.ts';
import { firstLaneSensors } from '../../services/autonomy/sensors/firstLanes.ts';
import { runPass } from '../../services/autonomy/sensors/runPass.ts';
import { readSnapshot } from '../../services/processes/fleetSensors/snapshotReader.ts';
import { enrollPayload, startEngine } from '../metal/engineFixture.ts';
import { startFakeAgent } from '../metal/fakeAgent.ts';

describe('the read models the key-age and step-overdue sensors read', () => {
  it('agents carry their key age and rotation requests, and running steps their own timeout', async () => {
    await using env = await startEngine();
    // The inventory read is held back, so the inspection's step stays running while the snapshot is taken.
    await using _agent = await startFakeAgent(env.nc, 'dc1', { delayMs: { 'inventory.read': 4_000 } });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 't' });
    await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 't' });
    const workflows = env.readers.get('workflows')!;
    const agents = env.readers.get('agents')!;
    await expect
      .poll(
        async () => {
          await workflows.waitFor(await env.store.streamLastSequence(), 5_000);
          return workflows.query((db) => db.prepare(`SELECT state FROM workflow_steps WHERE step_id = 'inventory.read'`).get() as { state: string } | undefined)
            ?.state;
        },
        { timeout: 15_000 },
      )
      .toBe('running');
    await env.bus.execute({ name: 'agent.rotateKey', payload: { agentId: 'site-dc1', reason: 'test' }, actor: 'op' });
    await agents.waitFor(await env.store.streamLastSequence(), 5_000);
    const keys = agents.query(longLivedAgentKeys);
    expect(keys).toEqual([expect.objectContaining({ agentId: 'site-dc1', role: 'site', siteId: 'dc1', rotations: 0 })]);
    expect(agents.query((db) => db.prepare(`SELECT rotation_requested_at FROM agents WHERE agent_id = 'site-dc1'`).get())).toMatchObject({
      rotation_requested_at: expect.any(String),
    });

    // Five minutes and a second on: past the inventory step's own 5 min timeout, far short of the 1 h fallback.
    const later = new Date(Date.now() + 301_000);
    const snapshot = await readSnapshot(env.nc, { workflows, agents }, { now: later, stepTimeoutMs: 3_600_000, controlPlaneNodes: [] });
    expect(snapshot.runningSteps).toEqual([expect.objectContaining({ stepId: 'inventory.read', timeoutMs: 300_000 })]);
    expect(snapshot.agents.map((a) => a.agentId)).toEqual(['site-dc1']);
    expect(snapshot.agents[0]!.rotationRequestedAt).toEqual(expect.any(String));
    const settings = { ...defaultSensorSettings, overdueFactor: 1, keyRotationAgeMs: 300_000 };
    const { signals } = runPass(firstLaneSensors, snapshot, settings);
    expect(signals.map((s) => `${s.kind} ${s.target.id}`)).toEqual(['agent-key-old site-dc1', `step-overdue ${snapshot.runningSteps[0]!.workflowId}`]);
    // The agent never carried the rotation out: past the stall time, its lane is a failing signal of its own.
    const stalled = runPass(firstLaneSensors, snapshot, { ...settings, keyRotationStallMs: 300_000 }).signals;
    expect(stalled.map((s) => `${s.kind} ${s.target.id}`)).toContain('agent-key-rotation-stalled site-dc1');
  });
});
