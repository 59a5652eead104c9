import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiClient } from '../../services/console/app/src/api/client.ts';

/** The console's API client against a stubbed `fetch`: which URLs it asks for, in order. */
function clientAnswering(answers: Record<string, unknown>) {
  const asked: string[] = [];
  vi.stubGlobal('fetch', async (url: string) => {
    asked.push(url);
    const path = url.split('?')[0]!;
    return new Response(JSON.stringify(answers[path] ?? {}), { status: 200, headers: { 'content-type': 'application/json' } });
  });
  return { client: new ApiClient('token', () => {}), asked };
}

describe('console API client: a session reads its own writes', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('asks every read model for the position its last command reached (regression: issue 37, a taken node answered 404)', async () => {
    const { client, asked } = clientAnswering({ '/v1/pool/allocate': { seq: 42, nodeId: 'sim-m001' }, '/v1/commands/metal.undeploy': { seq: 40 } });
    await client.node('sim-m001');
    await client.allocate({ siteId: 's', poolId: 'p', hardwareProfile: 'h', deploy: { imageUrl: 'http://i', imageSha256: 'a'.repeat(64), sshKeys: [] } });
    await client.node('sim-m001');
    await client.nodeWorkflows('sim-m001', 30);
    await client.nodes({ state: 'ready' });
    // A later command at a lower position (another aggregate's, answered as a duplicate) never lowers what is waited for.
    await client.command('metal.undeploy', { nodeId: 'sim-m002' }, 'key');
    await client.workflow('wf-1', 50);
    expect(asked).toEqual([
      '/v1/nodes/sim-m001',
      '/v1/pool/allocate',
      '/v1/nodes/sim-m001?minSeq=42',
      '/v1/nodes/sim-m001/workflows?minSeq=42&limit=20',
      '/v1/nodes?state=ready&minSeq=42',
      '/v1/commands/metal.undeploy',
      '/v1/workflows/wf-1?minSeq=50',
    ]);
  });

  it('leaves reads that no read model answers as they are', async () => {
    const { client, asked } = clientAnswering({ '/v1/commands/metal.deploy': { seq: 7 } });
    await client.command('metal.deploy', { nodeId: 'n1' }, 'key');
    await client.session();
    await client.nodeHistory('n1', 3);
    expect(asked).toEqual(['/v1/commands/metal.deploy', '/v1/session', '/v1/nodes/n1/history?at=3']);
  });
});
