import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ProviderError, connectProvider } from 'better-compute/sdk';
import type { ConformanceSubject, ProviderInstanceSpec } from 'better-compute/sdk';
import { hetznerCloudProvider } from '../../plugins/hetzner-cloud/index.ts';
import { HetznerCloud, issueProjectToken } from './hetzner-cloud/cloud.ts';
import { conformanceLiveThenReplayed } from './recordedConformance.ts';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'bc-hetzner-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

// Five a page, so the conformance pagination case (six servers) needs two pages.
const start = (token: string, options: Partial<Parameters<typeof HetznerCloud.start>[0]> = {}) => HetznerCloud.start({ token, perPage: 5, ...options });

function subjectFor(cloud: HetznerCloud, token: string, fetch: typeof globalThis.fetch): ConformanceSubject {
  return {
    provider: hetznerCloudProvider,
    config: { endpoint: cloud.endpoint, region: 'fsn1' },
    token,
    wrongToken: issueProjectToken(),
    fetch,
    pollIntervalMs: 5,
    timeoutMs: 10_000,
  };
}

const spec = (clientToken: string, more: Partial<ProviderInstanceSpec> = {}): ProviderInstanceSpec => ({
  clientToken,
  name: 'web',
  offerId: 'cx22',
  image: 'debian-12',
  sshKeys: ['ssh-ed25519 AAAA operator'],
  ...more,
});

describe('Hetzner Cloud provider', () => {
  test('passes the conformance suite against the emulator, then again offline from the recording', async () => {
    const token = issueProjectToken();
    const cloud = await start(token);
    await conformanceLiveThenReplayed({
      subject: (fetch) => subjectFor(cloud, token, fetch),
      close: () => cloud.close(),
      recordingFile: join(workDir, 'hetzner-conformance.json'),
      secret: token,
    });
    const records = cloud.records();
    expect(records.length).toBeGreaterThan(6);
    expect(records.every((r) => r.createdForToken === 1 && r.deleted)).toBe(true);
  });

  test('two racing creates of one client token make one server: the second is told uniqueness_error and finds the first', async () => {
    const token = issueProjectToken();
    await using cloud = await start(token);
    const client = connectProvider(hetznerCloudProvider, { config: { endpoint: cloud.endpoint, region: 'fsn1' }, token, fetch: globalThis.fetch });
    const [a, b] = await Promise.all([client.createInstance(spec('bc-race')), client.createInstance(spec('bc-race'))]);
    expect(a.providerInstanceId).toBe(b.providerInstanceId);
    expect(cloud.records()).toEqual([expect.objectContaining({ labels: { 'bc-client-token': 'bc-race' }, createdForToken: 1 })]);
    expect(cloud.requestCounts.get('POST /v1/servers')).toBe(2);
  });

  test('a 429 rate_limit_exceeded is retried after one refill, and a locked server after backoff', async () => {
    const token = issueProjectToken();
    await using cloud = await start(token);
    const client = connectProvider(hetznerCloudProvider, { config: { endpoint: cloud.endpoint, region: 'fsn1' }, token, fetch: globalThis.fetch });
    cloud.failNext(1, 'rate_limit_exceeded');
    expect((await client.listOffers()).map((o) => o.offerId)).toEqual(['cx22', 'cx32', 'cx42']);
    expect(cloud.requestCounts.get('GET /v1/server_types')).toBe(2);
    cloud.failNext(1, 'locked');
    const created = await client.createInstance(spec('bc-retry', { userData: '#!/bin/sh\necho hello\n' }));
    expect(created).toMatchObject({ clientToken: 'bc-retry', state: 'provisioning' });
    const [record] = cloud.records();
    expect(record).toMatchObject({ serverType: 'cx22', location: 'fsn1', createdForToken: 1 });
    // The keys ride in cloud-init beside the operator's own script, as two parts of one multipart message.
    expect(record?.userData).toContain('ssh_authorized_keys:\n  - "ssh-ed25519 AAAA operator"');
    expect(record?.userData).toContain('Content-Type: text/x-shellscript');
    expect(record?.userData).toContain('echo hello');
  });

  test('an account over its server limit is a configuration error, sent once, and a cloud that stays unavailable is transient', async () => {
    const token = issueProjectToken();
    await using cloud = await start(token, { serverLimit: 1 });
    let requests = 0;
    const client = connectProvider(hetznerCloudProvider, {
      config: { endpoint: cloud.endpoint, region: 'fsn1' },
      token,
      fetch: (input, init) => {
        requests++;
        return globalThis.fetch(input, init);
      },
    });
    await client.createInstance(spec('bc-first'));
    const before = requests;
    await expect(client.createInstance(spec('bc-second'))).rejects.toMatchObject({ kind: 'configuration', code: 'PROVIDER_CONFIGURATION', status: 403 });
    expect(requests - before).toBe(2); // the label lookup, then the one refused create
    cloud.failNext(4, 'unavailable');
    await expect(client.listOffers()).rejects.toMatchObject({ kind: 'transient', code: 'PROVIDER_UNAVAILABLE', status: 503 });
  });

  test('powers a server off and on through actions, and maps Hetzner statuses onto the platform states', async () => {
    const token = issueProjectToken();
    await using cloud = await start(token, { bootMs: 0, stopMs: 0, deleteMs: 0 });
    const client = connectProvider(hetznerCloudProvider, { config: { endpoint: cloud.endpoint, region: 'nbg1' }, token, fetch: globalThis.fetch });
    const { providerInstanceId: id } = await client.createInstance(spec('bc-power'));
    expect(await client.getInstance(id)).toMatchObject({ state: 'running', addresses: [expect.stringMatching(/^203\.0\.113\./)] });
    await client.stopInstance(id);
    expect(await client.getInstance(id)).toMatchObject({ state: 'stopped' });
    await client.startInstance(id);
    expect(await client.getInstance(id)).toMatchObject({ state: 'running' });
    expect(cloud.requestCounts.get('POST /v1/servers/:id/actions/poweroff')).toBe(1);
    expect(cloud.requestCounts.get('POST /v1/servers/:id/actions/poweron')).toBe(1);
    const error = await client.getInstance('not-a-number').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'not-found' });
  });
});
