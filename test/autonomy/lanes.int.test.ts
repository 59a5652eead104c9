import { generateKeyPairSync, sign } from 'node:crypto';
import { rotationMessage } from '../../schemas/trust/commands.ts';
import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { keyIdOf } from '../../schemas/trust/agentIds.ts';
import { agentAggregate } from '../../services/trust/agent/agent.ts';
import { instanceAggregate } from '../../services/vps/instance/instance.ts';
import { reservationOf } from '../../schemas/vps/tenantState.ts';
import { tenantAggregate } from '../../services/vps/tenant/tenant.ts';
import { recreatedInstanceId } from '../../services/processes/autonomyEngine/recreate.ts';
import { instancePayload, provisionMetalPool, quotaOf } from '../vps/vpsPayloads.ts';
import { policiesWith, signalOf, startAutonomy } from './autonomyFixture.ts';

const keyPair = () => {
  const pair = generateKeyPairSync('ed25519');
  return { privateKey: pair.privateKey, publicKey: pair.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64') };
};

describe('the recreate and rotate-key lanes carry out their remediations', () => {
  it('recreate: an instance desired running but in error is deleted and created again under a new id, by policy or once approved', async () => {
    await using env = await startAutonomy();
    await provisionMetalPool(env.bus, { t1: quotaOf(10, 10, 100_000, 1_000) });
    for (const id of ['i1', 'i2']) {
      await env.bus.execute({ name: 'vps.createInstance', payload: instancePayload('t1', id), actor: 't' });
      await env.bus.execute({
        name: 'vps.recordInstanceObserved',
        payload: { tenantId: 't1', instanceId: id, observed: 'error', message: 'boom' },
        actor: 'r',
      });
    }
    // `recreate` requires approval by default; i1 runs under an `auto` override, i2 under the default.
    await env.startEngine({ policies: policiesWith({ recreate: { disposition: 'auto' } }) });
    const auto = decisionIdOf('recreate', 'i1');
    await env.pass([signalOf('instance-error', 'i1')]);
    expect(await env.decision(auto)).toMatchObject({ status: 'running', plan: { action: 'vps.recreate' } });
    const next = recreatedInstanceId('i1', auto, 1);
    expect((await env.bus.repository.load(instanceAggregate, 'i1')).state).toMatchObject({ desired: 'deleted' });
    const tenant = (await env.bus.repository.load(tenantAggregate, 't1')).state;
    expect(reservationOf(tenant, next)).toMatchObject({ poolId: 'metal-a', flavorId: 'small', image: 'ubuntu-24.04', status: 'reserved' });
    // Exactly one delete and one create, even when the pass is decided again.
    await env.pass([signalOf('instance-error', 'i1')]);
    expect(await env.eventsOf('bc.evt.vps.tenant.t1', 'InstanceRequested')).toHaveLength(3);

    await env.engines[0]!.stop();
    env.engines.length = 0;
    await env.startEngine();
    const required = decisionIdOf('recreate', 'i2');
    await env.pass([signalOf('instance-error', 'i2')]);
    expect(await env.decision(required)).toMatchObject({ status: 'pending' });
    expect((await env.bus.repository.load(instanceAggregate, 'i2')).state).toMatchObject({ desired: 'running' });
    await env.bus.execute({ name: 'autonomy.approve', payload: { decisionId: required }, actor: 'token:approver' });
    await env.pass([signalOf('instance-error', 'i2')]);
    expect(await env.decision(required)).toMatchObject({ status: 'running' });
    expect((await env.bus.repository.load(instanceAggregate, 'i2')).state).toMatchObject({ desired: 'deleted' });
    expect(reservationOf((await env.bus.repository.load(tenantAggregate, 't1')).state, recreatedInstanceId('i2', required, 1))).toBeDefined();
  });

  it('recreate: while the deleted instance still holds the quota, the create waits for a later pass', async () => {
    await using env = await startAutonomy();
    await provisionMetalPool(env.bus, { t2: quotaOf(1, 1, 1_024, 10) });
    await env.bus.execute({ name: 'vps.createInstance', payload: instancePayload('t2', 'j1'), actor: 't' });
    await env.bus.execute({ name: 'vps.recordInstanceObserved', payload: { tenantId: 't2', instanceId: 'j1', observed: 'error' }, actor: 'r' });
    await env.startEngine({ policies: policiesWith({ recreate: { disposition: 'auto' } }) });
    const id = decisionIdOf('recreate', 'j1');
    await env.pass([signalOf('instance-error', 'j1')]);
    // Deleted, but the quota is still held: not started yet.
    expect(await env.decision(id)).toMatchObject({ status: 'approved' });
    expect((await env.bus.repository.load(instanceAggregate, 'j1')).state).toMatchObject({ desired: 'deleted' });
    // The reconciler saw it gone and gave the quota back; the signal is gone too (the instance is no longer desired running).
    await env.bus.execute({ name: 'vps.releaseQuota', payload: { tenantId: 't2', instanceId: 'j1' }, actor: 'r' });
    await env.pass([]);
    expect(await env.decision(id)).toMatchObject({ status: 'running' });
    expect(reservationOf((await env.bus.repository.load(tenantAggregate, 't2')).state, recreatedInstanceId('j1', id, 1))).toMatchObject({ status: 'reserved' });
  });

  it('rotate-key: an old agent key is asked to rotate by policy, once; the agent’s signed rotation settles it and the outcome is effective', async () => {
    await using env = await startAutonomy();
    const current = keyPair();
    const key = current.publicKey;
    await env.bus.execute({ name: 'agent.register', payload: { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey: key }, actor: 'join' });
    await env.startEngine();
    const id = decisionIdOf('rotate-key', 'site-dc1');
    const signal = signalOf('agent-key-old', 'site-dc1', { target: { type: 'agent', id: 'site-dc1' } });
    await env.pass([signal]);
    expect(await env.decision(id)).toMatchObject({ status: 'running', plan: { action: 'agent.rotateKey' } });
    expect((await env.bus.repository.load(agentAggregate, 'site-dc1')).state).toMatchObject({ rotationRequestedFor: keyIdOf(key) });
    // Asked again while the same key is to be replaced: nothing new.
    await env.bus.execute({ name: 'agent.rotateKey', payload: { agentId: 'site-dc1' }, actor: 'op' });
    expect(await env.eventsOf('bc.evt.trust.agent.site-dc1', 'AgentKeyRotationRequested')).toHaveLength(1);

    // The agent rotates the way it always could: the new key, signed over by the old one. That settles the request,
    // the key is young again, the signal goes, and the outcome is effective.
    const next = keyPair().publicKey;
    const rotationSignature = sign(null, rotationMessage('site-dc1', keyIdOf(key), keyIdOf(next)), current.privateKey).toString('base64');
    await env.bus.execute({
      name: 'agent.register',
      payload: { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey: next, rotationSignature, caller: 'site-dc1' },
      actor: 'nats:site',
    });
    expect((await env.bus.repository.load(agentAggregate, 'site-dc1')).state).toMatchObject({ keyId: keyIdOf(next), rotationRequestedFor: null });
    await env.pass([]);
    expect(await env.decision(id)).toMatchObject({ status: 'closed', closedReason: 'outcome', ineffectiveStreak: 0 });

    await expect(env.bus.execute({ name: 'agent.rotateKey', payload: { agentId: 'site-dc9' }, actor: 'op' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
