import { describe, expect, it } from 'vitest';
import { instanceAggregate } from '../../services/vps/instance/instance.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { gate, seen, startRemediationEngine } from './instanceRemediationFixture.ts';

type Env = Awaited<ReturnType<typeof startRemediationEngine>>;
const workflowOf = (result: { events: readonly { type: string; data: unknown }[] }) => (result.events[0]!.data as { workflowId: string }).workflowId;
const remediate = (env: Env, tenantId: string, instanceId: string, profile = 'instance-probe') =>
  env.run('vps.remediateInstance', { tenantId, instanceId, profile });
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (err: { code?: string }) => err.code,
  );

describe('vps.remediateInstance', () => {
  it('runs a plugin profile against a running and a stopped instance as a workflow, and returns each to its prior state', { timeout: 120_000 }, async () => {
    await using env = await startRemediationEngine();
    await env.instanceAt('t-a', 'web', 'running');
    await env.instanceAt('t-a', 'db', 'stopped');

    const running = await remediate(env, 't-a', 'web');
    const stopped = await remediate(env, 't-a', 'db');
    expect(running.events[0]).toMatchObject({
      type: 'InstanceRemediationRequested',
      data: { instanceId: 'web', returnTo: 'running', profile: 'instance-probe' },
    });
    expect(stopped.events[0]).toMatchObject({ type: 'InstanceRemediationRequested', data: { instanceId: 'db', returnTo: 'stopped' } });

    const web = await env.waitForInstance('web', (s) => s.remediation === null && s.desired === 'running');
    const db = await env.waitForInstance('db', (s) => s.remediation === null && s.desired === 'stopped');
    expect([web.attention, db.attention]).toEqual([null, null]);
    for (const [result, instanceId] of [
      [running, 'web'],
      [stopped, 'db'],
    ] as const) {
      const wf = (await env.bus.repository.load(workflowAggregate, workflowOf(result))).state;
      expect(wf).toMatchObject({ status: 'completed', operation: 'remediate', nodeId: instanceId, instance: { instanceId, tenantId: 't-a' } });
    }
    // The plugin's step ran against the instance, with what the reconciler last saw of it.
    expect(seen.filter((s) => s.instanceId === 'web')).toEqual([
      { instanceId: 'web', tenantId: 't-a', poolId: 'metal-a', providerInstanceId: 'hw-web', addresses: ['10.0.0.7'], observed: 'running' },
    ]);
    // Back at rest: the tenant's own verbs work again.
    await env.run('vps.stopInstance', { tenantId: 't-a', instanceId: 'web' });
    expect((await env.instanceState('web')).desired).toBe('stopped');
  });

  it('is refused with INSTANCE_BUSY while another operation runs on the instance, and the same request again is a no-op', { timeout: 120_000 }, async () => {
    await using env = await startRemediationEngine();
    await env.instanceAt('t-a', 'web', 'running');
    await env.instanceAt('t-a', 'fresh', 'provisioning');
    let release = () => {};
    gate.hold = new Promise<void>((done) => (release = done));
    try {
      const first = await env.bus.execute({
        name: 'vps.remediateInstance',
        payload: { tenantId: 't-a', instanceId: 'web', profile: 'instance-probe' },
        actor: 'test',
        commandId: 'remediate-web-1',
      });
      await env.waitForInstance('web', () => seen.some((s) => s.instanceId === 'web'));
      const subjectSeq = async () => [
        (await env.bus.repository.load(instanceAggregate, 'web')).seq,
        (await env.bus.repository.load(instanceAggregate, 'fresh')).seq,
      ];
      const before = await subjectSeq();
      expect(await codeOf(remediate(env, 't-a', 'web'))).toBe('INSTANCE_BUSY');
      expect(await codeOf(remediate(env, 't-a', 'web', 'instance-broken'))).toBe('INSTANCE_BUSY');
      expect(await codeOf(env.run('vps.stopInstance', { tenantId: 't-a', instanceId: 'web' }))).toBe('INSTANCE_BUSY');
      // Still being created: the reconciler's operation is not over.
      expect(await codeOf(remediate(env, 't-a', 'fresh'))).toBe('INSTANCE_BUSY');
      // Nothing was appended to either instance.
      expect(await subjectSeq()).toEqual(before);
      // The same command again names the same workflow: nothing new.
      const again = await env.bus.execute({
        name: 'vps.remediateInstance',
        payload: { tenantId: 't-a', instanceId: 'web', profile: 'instance-probe' },
        actor: 'test',
        commandId: 'remediate-web-1',
      });
      expect(again.events.filter((e) => !again.duplicate && e.type === 'InstanceRemediationRequested')).toEqual([]);
      expect((await env.instanceState('web')).remediation?.workflowId).toBe(workflowOf(first));
    } finally {
      gate.hold = null;
      release();
    }
    await env.waitForInstance('web', (s) => s.remediation === null && s.desired === 'running' && s.attention === null);
    expect(await codeOf(remediate(env, 't-a', 'web'))).toBe('accepted');
  });

  it("refuses another tenant's instance as if it did not exist, and a profile that needs a node or destroys", { timeout: 120_000 }, async () => {
    await using env = await startRemediationEngine();
    await env.instanceAt('t-a', 'web', 'running');
    const before = await env.store.streamLastSequence();
    expect(await codeOf(remediate(env, 't-b', 'web'))).toBe('NOT_FOUND');
    expect(await codeOf(remediate(env, 't-b', 'nothing-here'))).toBe('NOT_FOUND');
    // bmc-check reads a BMC through the site agent; power-cycle also destroys.
    expect(await codeOf(remediate(env, 't-a', 'web', 'bmc-check'))).toBe('UNSUPPORTED');
    expect(await codeOf(remediate(env, 't-a', 'web', 'no-such'))).toBe('PRECONDITION_FAILED');
    expect(await env.store.streamLastSequence()).toBe(before);
  });

  it('leaves the instance needing attention when the remediation fails, held from the reconciler until its tenant acts', { timeout: 120_000 }, async () => {
    await using env = await startRemediationEngine();
    await env.instanceAt('t-a', 'web', 'running');
    await env.instanceAt('t-a', 'api', 'running');
    const failed = await remediate(env, 't-a', 'web', 'instance-broken');
    const web = await env.waitForInstance('web', (s) => s.attention != null);
    expect(web).toMatchObject({
      remediation: null,
      desired: 'running',
      attention: { workflowId: workflowOf(failed), failedStep: 'probe.broken', reason: expect.stringContaining('does not answer') as string },
    });
    // A step that reads the node fails too, and says why.
    await remediate(env, 't-a', 'api', 'instance-node');
    const api = await env.waitForInstance('api', (s) => s.attention != null);
    expect(api.attention).toMatchObject({ failedStep: 'probe.node', reason: expect.stringContaining('UNSUPPORTED') as string });

    // Saying what it should be (even what it was) takes the instance back; so does another remediation.
    const started = await env.run('vps.startInstance', { tenantId: 't-a', instanceId: 'web' });
    expect(started.events.map((e) => e.type)).toEqual(['InstanceDesiredStateSet']);
    expect((await env.instanceState('web')).attention).toBeNull();
    await remediate(env, 't-a', 'api');
    await env.waitForInstance('api', (s) => s.remediation === null && s.attention === null);
  });
});
