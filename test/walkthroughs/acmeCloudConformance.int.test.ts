import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ProviderError, connectProvider, defineProvider, providerConformanceCases, runConformance } from 'better-compute/sdk';
import type { ConformanceSubject } from 'better-compute/sdk';
import { AcmeCloud, issueAccountToken } from './acme-cloud/cloud.ts';
import type { AcmeServerRecord } from './acme-cloud/cloud.ts';
import { acmeCloudProvider } from './acme-cloud/provider.ts';
import { conformanceLiveThenReplayed } from './recordedConformance.ts';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'bc-acme-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

function serversPerToken(records: AcmeServerRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const record of records) counts.set(record.clientToken, (counts.get(record.clientToken) ?? 0) + 1);
  return counts;
}

function subjectFor(cloud: AcmeCloud, token: string, fetch: typeof globalThis.fetch): ConformanceSubject {
  return {
    provider: acmeCloudProvider,
    config: { endpoint: cloud.endpoint, region: 'fra1' },
    token,
    wrongToken: issueAccountToken(),
    fetch,
    pollIntervalMs: 5,
    timeoutMs: 10_000,
  };
}

describe('Acme Cloud provider', () => {
  test('passes conformance against the emulator, then again offline from the recording', async () => {
    const token = issueAccountToken();
    const cloud = await AcmeCloud.start({ token });
    // Offline: the same subject, but the only transport is the replayer and nothing listens on the endpoint.
    const { replay } = await conformanceLiveThenReplayed({
      subject: (fetch) => subjectFor(cloud, token, fetch),
      close: () => cloud.close(),
      recordingFile: join(workDir, 'acme-conformance.json'),
      secret: token,
    });
    const records = cloud.records();
    expect(records.length).toBeGreaterThan(6);
    expect([...serversPerToken(records).values()].every((n) => n === 1)).toBe(true);
    expect(records.every((r) => r.createdForToken === 1 && r.deleted)).toBe(true);
    expect(await refusesConnections(cloud.port)).toBe(true);
    await expect(replay.fetch(`${cloud.endpoint}/v1/offers`)).rejects.toThrow(/no recorded exchange left for GET \/v1\/offers/);
  });

  test('reports a provider that creates a second instance for one client token', async () => {
    const token = issueAccountToken();
    await using cloud = await AcmeCloud.start({ token });
    // A plugin that forgets idempotency: every create goes out with a token of its own.
    let creates = 0;
    const forgetful = defineProvider({
      id: 'acme-forgetful',
      configSchema: acmeCloudProvider.configSchema,
      create(ctx) {
        const client = acmeCloudProvider.create(ctx);
        return { ...client, createInstance: (spec) => client.createInstance({ ...spec, clientToken: `${spec.clientToken}-${++creates}` }) };
      },
    });
    const idempotency = providerConformanceCases().filter((c) => c.name === 'createInstance is idempotent by client token');
    const report = await runConformance(idempotency, { ...subjectFor(cloud, token, globalThis.fetch), provider: forgetful });
    expect(report.ok).toBe(false);
    expect(report.cases).toEqual([expect.objectContaining({ name: idempotency[0]?.name, ok: false })]);
    // The failing case still cleaned up both instances it caused.
    expect(cloud.records().map((r) => r.deleted)).toEqual([true, true]);
  });

  test('a wrong account token is a configuration error that does not carry the token', async () => {
    const token = issueAccountToken();
    await using cloud = await AcmeCloud.start({ token });
    const wrongToken = issueAccountToken();
    let requests = 0;
    const client = connectProvider(acmeCloudProvider, {
      config: { endpoint: cloud.endpoint, region: 'fra1' },
      token: wrongToken,
      fetch: (input, init) => {
        requests++;
        return globalThis.fetch(input, init);
      },
    });
    const error = await client.listOffers().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'configuration', code: 'PROVIDER_CONFIGURATION', status: 401 });
    expect((error as ProviderError).message).not.toContain(wrongToken);
    expect((error as ProviderError).message).not.toContain(token);
    expect(requests).toBe(1);
  });

  test('a transient 503 is retried and the create still makes one server', async () => {
    const token = issueAccountToken();
    await using cloud = await AcmeCloud.start({ token });
    const client = connectProvider(acmeCloudProvider, { config: { endpoint: cloud.endpoint, region: 'fra1' }, token, fetch: globalThis.fetch });
    cloud.failNext(2, 503);
    const offers = await client.listOffers();
    expect(offers.map((o) => o.offerId)).toContain('a1.small');

    cloud.failNext(1, 503);
    const spec = {
      clientToken: 'bc-retry',
      name: 'retry',
      offerId: 'a1.small',
      image: 'debian-12',
      sshKeys: ['ssh-ed25519 AAAA test'],
      userData: '#cloud-config\n',
    };
    const instance = await client.createInstance(spec);
    expect(instance).toMatchObject({ clientToken: 'bc-retry', state: 'provisioning' });
    expect(cloud.records()).toEqual([
      expect.objectContaining({
        id: instance.providerInstanceId,
        clientToken: 'bc-retry',
        createdForToken: 1,
        userData: '#cloud-config\n',
        sshKeys: ['ssh-ed25519 AAAA test'],
      }),
    ]);
  });

  test('a cloud that stays unavailable surfaces PROVIDER_UNAVAILABLE after the retries', async () => {
    const token = issueAccountToken();
    await using cloud = await AcmeCloud.start({ token });
    const client = connectProvider(acmeCloudProvider, { config: { endpoint: cloud.endpoint, region: 'fra1' }, token, fetch: globalThis.fetch });
    cloud.failNext(4, 503);
    await expect(client.listOffers()).rejects.toMatchObject({ kind: 'transient', code: 'PROVIDER_UNAVAILABLE', status: 503 });
    // The four tries used up the injected failures: the next call goes through.
    await expect(client.listOffers()).resolves.toHaveLength(3);
  });

  test('defineProvider returns a frozen definition whose id keeps its literal type', () => {
    const id: 'acme-cloud' = acmeCloudProvider.id;
    expect(id).toBe('acme-cloud');
    expect(Object.isFrozen(acmeCloudProvider)).toBe(true);
  });

  test('an invalid account config is a configuration error naming the field', () => {
    const create = (): unknown =>
      connectProvider(acmeCloudProvider, { config: { endpoint: 'not a url', region: 'fra1' }, token: 't', fetch: globalThis.fetch });
    expect(create).toThrow(expect.objectContaining({ code: 'PROVIDER_CONFIGURATION', message: 'acme-cloud: invalid account config at endpoint' }));
  });
});
