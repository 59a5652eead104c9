import { describe, expect, it } from 'vitest';
import { ProviderError, clientTokenOf, type ProviderClient, type ProviderInstance } from 'better-compute/sdk';
import { runEffects, type EffectPorts } from '../../services/platform/processManager/runEffects.ts';
import { planPass, probe, type ProviderAccess } from '../../services/processes/vpsReconciler/converge.ts';
import type { ConvergeTask } from '../../services/processes/vpsReconciler/effects.ts';
import { isAtRest, VpsModel, type ReconciledInstance } from '../../services/processes/vpsReconciler/model.ts';
import { idFor } from '../../schemas/ids.ts';
import { evolveVps } from '../../services/processes/vpsReconciler/reconciliation.ts';

const instanceOf = (overrides: Partial<ReconciledInstance> = {}): ReconciledInstance => ({
  key: 'tenant-a/web-1',
  tenantId: 'tenant-a',
  instanceId: 'web-1',
  spec: {
    poolId: 'acme-pool',
    flavorId: 'small',
    image: 'debian-12',
    sshKeys: ['ssh-ed25519 AAAA key'],
    userData: '#cloud-config\n',
    resources: { vcpus: 1, memoryMib: 1_024, diskGib: 10 },
  },
  desired: 'running',
  observed: null,
  providerInstanceId: null,
  addresses: [],
  message: null,
  released: false,
  refused: false,
  ...overrides,
});

/** A client whose every call is logged; `answers` overrides single methods. */
function fakeClient(calls: string[], answers: Partial<ProviderClient> = {}): ProviderClient {
  const server: ProviderInstance = { providerInstanceId: 'srv-1', clientToken: clientTokenOf('web-1'), state: 'provisioning', addresses: [] };
  const logged =
    <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) =>
    (...args: A) => (calls.push(name), fn(...args));
  const fallback: ProviderClient = {
    listOffers: async () => [],
    createInstance: async () => server,
    getInstance: async () => server,
    findByClientToken: async () => null,
    startInstance: async () => undefined,
    stopInstance: async () => undefined,
    deleteInstance: async () => undefined,
    listInstances: async () => [server],
  };
  const merged = { ...fallback, ...answers };
  return Object.fromEntries(Object.entries(merged).map(([name, fn]) => [name, logged(name, fn as never)])) as unknown as ProviderClient;
}

/**
 * One pass run the way the process-manager host runs it (`runEffects`): the plan, the provider probe, each command
 * "sent" to a log and folded into the model with the reconciler's own `evolveVps`.
 */
function effectsFor(client: ProviderClient | (() => never), options: { refuse?: boolean; sentBefore?: string[] } = {}) {
  const log: string[] = [];
  const model = new VpsModel();
  const access: ProviderAccess = {
    signal: new AbortController().signal,
    client: async () => (typeof client === 'function' ? client() : client),
    offerOf: () => 'a1.small',
  };
  // Command ids the log holds, by the sequence of their message: a repeated one is answered as the duplicate it is,
  // appending nothing.
  const sent = new Map<string, number>((options.sentBefore ?? []).map((id, i) => [id, i + 1]));
  const ports: EffectPorts<ConvergeTask> = {
    async send({ name, payload, commandId }) {
      const { observed, message } = payload as { observed?: string; message?: string };
      log.push(name === 'vps.recordInstanceObserved' ? `record ${observed}${message ? ` (${message})` : ''}` : name.slice('vps.'.length));
      if (options.refuse && observed === 'provisioning') return { refusal: { code: 'ALREADY_EXISTS', message: 'owned by tenant-b' } };
      const appended = !sent.has(commandId);
      if (appended) sent.set(commandId, sent.size + 1);
      return { appended, seq: sent.get(commandId)! };
    },
    publish: async () => undefined,
    perform: async (task) => {
      const instance = model.instances.get(task.converge)!;
      return task.step === 'plan' ? planPass(instance) : probe(instance, access);
    },
    absorbs: () => false,
    fold: (outcome) => evolveVps(model, outcome, { backoffMs: 1, maxBackoffMs: 1 }),
    now: () => 0,
  };
  return { effects: { model, ports }, log };
}

/** A pass over `instance`, as the reconciler decides it on a tenant's intent. */
function converge(instance: ReconciledInstance, { model, ports }: ReturnType<typeof effectsFor>['effects']) {
  model.instances.set(instance.key, instance);
  return runEffects<ConvergeTask>([{ kind: 'task', task: { converge: instance.key, step: 'plan' } }], ports);
}

describe('vps reconciler converge', () => {
  it('records provisioning before it creates, and creates at once on the pass whose record appended it', async () => {
    const calls: string[] = [];
    const { effects, log } = effectsFor(fakeClient(calls));
    const instance = instanceOf();
    await converge(instance, effects);
    expect(calls).toEqual(['createInstance']);
    expect(log).toEqual(['record provisioning']);
    // The next pass no longer knows what the provider holds: it looks the client token up first.
    await converge(instance, effects);
    expect(calls).toEqual(['createInstance', 'findByClientToken', 'createInstance']);
  });

  it('looks the client token up before creating when the provisioning record was there before (a restarted reconciler)', async () => {
    const calls: string[] = [];
    const server: ProviderInstance = { providerInstanceId: 'srv-1', clientToken: clientTokenOf('web-1'), state: 'running', addresses: ['203.0.113.1'] };
    // The model lags the log: the request is replayed before the record an earlier process appended.
    const { effects, log } = effectsFor(fakeClient(calls, { findByClientToken: async () => server }), {
      sentBefore: [idFor('observe-provisioning', 'tenant-a/web-1')],
    });
    await converge(instanceOf(), effects);
    expect(calls).toEqual(['findByClientToken']);
    expect(log).toEqual(['record provisioning', 'record running']);
  });

  it('looks up again after a probe that failed: its create may have reached the provider', async () => {
    const calls: string[] = [];
    let failures = 1;
    const client = fakeClient(calls, {
      createInstance: async () => {
        if (failures-- > 0) throw new ProviderError('transient', 'HTTP 503');
        return { providerInstanceId: 'srv-1', clientToken: clientTokenOf('web-1'), state: 'provisioning', addresses: [] };
      },
    });
    const { effects } = effectsFor(client);
    const instance = instanceOf();
    await expect(converge(instance, effects)).rejects.toThrow('HTTP 503');
    await converge(instance, effects);
    expect(calls).toEqual(['createInstance', 'findByClientToken', 'createInstance']);
  });

  it('records the provider id with the state after provisioning, finding the server again by its client token', async () => {
    const calls: string[] = [];
    let state: ProviderInstance['state'] = 'provisioning';
    const server = () => ({ providerInstanceId: 'srv-1', clientToken: clientTokenOf('web-1'), state, addresses: ['203.0.113.1'] });
    const { effects, log } = effectsFor(fakeClient(calls, { findByClientToken: async () => server() }));
    const instance = instanceOf({ observed: 'provisioning' });
    await converge(instance, effects);
    expect(log).toEqual([]);
    expect(instance.providerInstanceId).toBeNull();
    state = 'running';
    await converge(instance, effects);
    expect(calls).toEqual(['findByClientToken', 'findByClientToken']);
    expect(log).toEqual(['record running']);
    expect(instance).toMatchObject({ observed: 'running', providerInstanceId: 'srv-1', addresses: ['203.0.113.1'] });
  });

  it('creates nothing and gives the quota back when another tenant holds the instance id', async () => {
    const calls: string[] = [];
    const { effects, log } = effectsFor(fakeClient(calls), { refuse: true });
    const instance = instanceOf();
    await converge(instance, effects);
    expect(calls).toEqual([]);
    expect(log).toEqual(['record provisioning', 'releaseQuota']);
    expect(isAtRest(instance)).toBe(true);
  });

  it('ends in error with the provider message and releases the quota when the account is misconfigured', async () => {
    const { effects, log } = effectsFor(() => {
      throw new ProviderError('configuration', 'HTTP 401: bad token');
    });
    const instance = instanceOf();
    await converge(instance, effects);
    expect(log).toEqual(['record provisioning', 'record error (PROVIDER_CONFIGURATION: HTTP 401: bad token)', 'releaseQuota']);
    expect(isAtRest(instance)).toBe(true);
  });

  it('keeps the quota when the provider refuses after the instance exists', async () => {
    const calls: string[] = [];
    const running: ProviderInstance = { providerInstanceId: 'srv-1', clientToken: clientTokenOf('web-1'), state: 'running', addresses: ['203.0.113.1'] };
    const client = fakeClient(calls, {
      getInstance: async () => running,
      stopInstance: async () => Promise.reject(new ProviderError('rejected', 'HTTP 409: busy')),
    });
    const { effects, log } = effectsFor(client);
    await converge(instanceOf({ desired: 'stopped', observed: 'running', providerInstanceId: 'srv-1' }), effects);
    expect(log).toEqual(['record error (PROVIDER_REJECTED: HTTP 409: busy)']);
  });

  it('throws a transient failure for the caller to retry, recording nothing', async () => {
    const calls: string[] = [];
    const { effects, log } = effectsFor(fakeClient(calls, { findByClientToken: async () => Promise.reject(new ProviderError('transient', 'HTTP 503')) }));
    await expect(converge(instanceOf({ observed: 'provisioning' }), effects)).rejects.toMatchObject({ kind: 'transient' });
    expect(log).toEqual([]);
  });

  it('records running once, and sends nothing to the tenant when the instance runs (the read model counts it used)', async () => {
    const calls: string[] = [];
    const running: ProviderInstance = { providerInstanceId: 'srv-1', clientToken: clientTokenOf('web-1'), state: 'running', addresses: ['203.0.113.1'] };
    const { effects, log } = effectsFor(fakeClient(calls, { getInstance: async () => running }));
    const instance = instanceOf({ observed: 'provisioning', providerInstanceId: 'srv-1' });
    await converge(instance, effects);
    await converge(instance, effects);
    expect(log).toEqual(['record running']);
  });

  it('deletes an instance that never got past the request without asking the provider', async () => {
    const calls: string[] = [];
    const { effects, log } = effectsFor(fakeClient(calls));
    await converge(instanceOf({ desired: 'deleted' }), effects);
    expect(calls).toEqual([]);
    expect(log).toEqual(['record deleted', 'releaseQuota']);
  });

  it('deletes at the provider, then records deleted and releases once it is gone', async () => {
    const calls: string[] = [];
    let gone = false;
    const client = fakeClient(calls, {
      getInstance: async () =>
        gone ? Promise.reject(new ProviderError('not-found', 'HTTP 404')) : { providerInstanceId: 'srv-1', clientToken: 'x', state: 'running', addresses: [] },
      deleteInstance: async () => void (gone = true),
    });
    const { effects, log } = effectsFor(client);
    const instance = instanceOf({ desired: 'deleted', observed: 'running', providerInstanceId: 'srv-1' });
    await converge(instance, effects);
    await converge(instance, effects);
    expect(calls).toEqual(['getInstance', 'deleteInstance', 'getInstance']);
    expect(log).toEqual(['record deleting', 'record deleted', 'releaseQuota']);
  });
});
