import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { clientTokenOf, definePlugin, defineProvider } from 'better-compute/sdk';
import { sealingAad } from '../../schemas/secrets/sealed.ts';
import { AggregateRepository, LATEST_SEEN_MAX_AGE_MS } from '../../services/platform/commands/aggregateRepository.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { sealedProviderTokens } from '../../services/stack/providerTokens.ts';
import { MasterKey } from '../../services/secrets/masterKey.ts';
import { seal } from '../../services/secrets/sealing.ts';
import { instanceAggregate } from '../../services/vps/instance/instance.ts';
import { loadReconcilerConfig } from '../../services/processes/vpsReconciler/config.ts';
import { providersOf } from '../../services/processes/vpsReconciler/providerClients.ts';
import { VpsReconciler } from '../../services/processes/vpsReconciler/reconciler.ts';
import { reservationOf } from '../../schemas/vps/tenantState.ts';
import { tenantAggregate } from '../../services/vps/tenant/tenant.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { AcmeCloud, issueAccountToken } from '../walkthroughs/acme-cloud/cloud.ts';
import { acmeCloudProvider } from '../walkthroughs/acme-cloud/provider.ts';
import { instancePayload, quotaOf } from './vpsPayloads.ts';

const USER_DATA = '#cloud-config\nruncmd: [echo hello]\n';

/** The Acme plugin with its creates counted: what the reconciler asked for, not what the cloud's idempotency absorbed. */
function countingAcmePlugin() {
  const counted = { creates: 0 };
  const provider = defineProvider({
    id: 'acme-cloud',
    configSchema: acmeCloudProvider.configSchema,
    create(ctx) {
      const client = acmeCloudProvider.create(ctx);
      return { ...client, createInstance: (spec) => (counted.creates++, client.createInstance(spec)) };
    },
  });
  return { counted, plugin: definePlugin({ id: 'acme-cloud', version: '0.0.0-test', providers: [provider] }) };
}

/** A backbone answering commands over NATS, an Acme emulator, and a provider pool on it offered to `tenant-a`. */
async function startWorld() {
  const backbone = await startBackbone({ projectors: false });
  const commands = serveCommands(backbone.nc, backbone.bus, backbone.log);
  const token = issueAccountToken();
  const cloud = await AcmeCloud.start({ token, bootMs: 100 });
  const masterKey = new MasterKey(randomBytes(32));
  const run = (name: string, payload: unknown) => backbone.bus.execute({ name, payload, actor: 'test' });
  await run('secrets.put', {
    secretId: 'acme-token',
    kind: 'provider-token',
    version: 1,
    sealed: seal(JSON.stringify(token), masterKey, sealingAad('acme-token', 1)),
  });
  await run('vps.createProviderAccount', {
    accountId: 'acme',
    providerId: 'acme-cloud',
    region: 'fra1',
    config: { endpoint: cloud.endpoint },
    tokenSecretId: 'acme-token',
  });
  await run('vps.createPool', { poolId: 'acme-pool', class: 'provider', agent: 'none', accountId: 'acme' });
  await run('vps.createFlavor', { flavorId: 'small', vcpus: 1, memoryMib: 1_024, diskGib: 25 });
  await run('vps.mapFlavor', { flavorId: 'small', poolId: 'acme-pool', offerId: 'a1.small' });
  await run('vps.createTenant', { tenantId: 'tenant-a', name: 'A' });
  await run('vps.setQuota', { tenantId: 'tenant-a', ...quotaOf(2, 2, 2_048, 50) });
  await run('vps.offerPool', { poolId: 'acme-pool', tenantId: 'tenant-a' });
  const repository = new AggregateRepository(backbone.store);
  const { counted, plugin } = countingAcmePlugin();
  const reconciler = (fetch: typeof globalThis.fetch = globalThis.fetch) =>
    new VpsReconciler(backbone.nc, backbone.store, loadReconcilerConfig({}, { resyncMs: 50, backoffMs: 50 }), backbone.log, {
      providers: providersOf([plugin]),
      tokens: sealedProviderTokens(backbone.store, masterKey),
      fetch,
    });
  const instance = async (id: string) => (await repository.load(instanceAggregate, id)).state;
  const until = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; !(await check()); i++) {
      if (i > 300) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  };
  return {
    backbone,
    cloud,
    run,
    reconciler,
    instance,
    until,
    repository,
    counted,
    token,
    masterKey,
    async [Symbol.asyncDispose]() {
      commands.unsubscribe();
      await cloud.close();
      await backbone[Symbol.asyncDispose]();
    },
  };
}

describe('vps reconciler', () => {
  it('creates nothing new after a crash between the provider accepting a create and running being recorded', { timeout: 60_000 }, async () => {
    await using world = await startWorld();
    // The first reconciler's create reaches the cloud, and then it dies before hearing the answer.
    let accepted!: () => void;
    const createAccepted = new Promise<void>((resolve) => (accepted = resolve));
    const crashing: typeof fetch = async (input, init) => {
      const response = await globalThis.fetch(input, init);
      if (init?.method !== 'POST' || !(input instanceof Request ? input.url : input.toString()).endsWith('/v1/servers')) return response;
      accepted();
      return new Promise<Response>((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)));
    };
    const first = world.reconciler(crashing);
    await first.start();
    await world.run('vps.createInstance', { ...instancePayload('tenant-a', 'web-1', 'small', 'acme-pool'), userData: USER_DATA });
    await createAccepted;
    await first.stop();
    expect(await world.instance('web-1')).toMatchObject({ observed: 'provisioning', providerInstanceId: null });
    expect(world.cloud.records()).toHaveLength(1);
    expect(world.counted.creates).toBe(1);

    const second = world.reconciler();
    await second.start();
    try {
      await world.until('web-1 running', async () => (await world.instance('web-1')).observed === 'running');
    } finally {
      await second.stop();
    }
    // The fresh reconciler found the server by its client token and asked for no create at all.
    expect(world.counted.creates).toBe(1);
    const records = world.cloud.records();
    expect(records).toEqual([
      expect.objectContaining({
        clientToken: clientTokenOf('web-1'),
        createdForToken: 1,
        status: 'running',
        userData: USER_DATA,
        sshKeys: instancePayload('tenant-a', 'web-1').sshKeys,
      }),
    ]);
    const state = await world.instance('web-1');
    expect(state).toMatchObject({ providerInstanceId: records[0]!.id, addresses: [expect.stringMatching(/^203\.0\.113\./)] });
    // The run costs the tenant's subject no write: the read model counts the reservation used from the running report.
    expect(reservationOf((await world.repository.load(tenantAggregate, 'tenant-a')).state, 'web-1')?.status).toBe('reserved');
  });

  it('retries a provider that stays unavailable with backoff and records no error', { timeout: 60_000 }, async () => {
    await using world = await startWorld();
    const reconciler = world.reconciler();
    await reconciler.start();
    try {
      // Six 503s: more than the plugin's own four tries, so one whole pass fails and the reconciler tries again.
      world.cloud.failNext(6, 503);
      await world.run('vps.createInstance', instancePayload('tenant-a', 'web-2', 'small', 'acme-pool'));
      await world.until('web-2 running', async () => (await world.instance('web-2')).observed === 'running');
    } finally {
      await reconciler.stop();
    }
    const observed: string[] = [];
    for await (const stored of world.backbone.store.readAfter('bc.evt.vps.instance.web-2', 0))
      for (const e of stored.batch.events) observed.push((e.data as { observed?: string }).observed ?? e.type);
    expect(observed).not.toContain('error');
    expect(observed.at(-1)).toBe('running');
    expect(world.cloud.records().map((r) => r.createdForToken)).toEqual([1]);
  });

  it('deletes the instance at the provider and gives the quota back', { timeout: 60_000 }, async () => {
    await using world = await startWorld();
    const reconciler = world.reconciler();
    await reconciler.start();
    try {
      await world.run('vps.createInstance', instancePayload('tenant-a', 'web-3', 'small', 'acme-pool'));
      await world.until('web-3 running', async () => (await world.instance('web-3')).observed === 'running');
      await world.run('vps.deleteInstance', { tenantId: 'tenant-a', instanceId: 'web-3' });
      await world.until(
        'web-3 released',
        async () => reservationOf((await world.repository.load(tenantAggregate, 'tenant-a')).state, 'web-3')?.status === 'released',
      );
    } finally {
      await reconciler.stop();
    }
    expect((await world.instance('web-3')).observed).toBe('deleted');
    expect(world.cloud.records()).toEqual([expect.objectContaining({ deleted: true, createdForToken: 1 })]);
  });

  it('calls the provider with a rotated token from at most a second after the rotation on', { timeout: 60_000 }, async () => {
    await using world = await startWorld();
    const rotated = 'acme-rotated-token';
    const calls: { at: number; token: string }[] = [];
    // Records the token of every call; the emulated account knows one token, so the rotated one is swapped for it.
    const recording: typeof fetch = (input, init) => {
      const headers = { ...(init?.headers as Record<string, string>) };
      calls.push({ at: Date.now(), token: headers.authorization!.replace(/^Bearer /, '') });
      return globalThis.fetch(input, { ...init, headers: { ...headers, authorization: `Bearer ${world.token}` } });
    };
    const reconciler = world.reconciler(recording);
    await reconciler.start();
    let rotatedAt: number;
    try {
      await world.run('vps.createInstance', instancePayload('tenant-a', 'web-1', 'small', 'acme-pool'));
      await world.until('web-1 running', async () => (await world.instance('web-1')).observed === 'running');
      rotatedAt = Date.now();
      const sealed = seal(JSON.stringify(rotated), world.masterKey, sealingAad('acme-token', 2));
      await world.run('secrets.put', { secretId: 'acme-token', kind: 'provider-token', version: 2, sealed });
      await sleep(LATEST_SEEN_MAX_AGE_MS);
      await world.run('vps.createInstance', instancePayload('tenant-a', 'web-2', 'small', 'acme-pool'));
      await world.until('web-2 running', async () => (await world.instance('web-2')).observed === 'running');
    } finally {
      await reconciler.stop();
    }
    const before = calls.filter((c) => c.at < rotatedAt);
    const after = calls.filter((c) => c.at >= rotatedAt + LATEST_SEEN_MAX_AGE_MS);
    expect(before.length).toBeGreaterThan(0);
    expect(new Set(before.map((c) => c.token))).toEqual(new Set([world.token]));
    expect(after.length).toBeGreaterThan(0);
    expect(new Set(after.map((c) => c.token))).toEqual(new Set([rotated]));
  });
});
