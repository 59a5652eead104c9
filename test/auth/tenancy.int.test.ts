import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('tenancy', () => {
  it('shows a tenant its own nodes, workflows and events only: every GET route, foreign ids substituted, leaks none', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { app, bus } = env;
    await bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    for (const nodeId of ['own-node', 'foreign-node', 'free-node']) {
      await bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), actor: 'test' });
      const inspection = await bus.execute({ name: 'metal.startInspection', payload: { nodeId }, actor: 'test' });
      const workflowId = (inspection.events[0]!.data as { workflowId: string }).workflowId;
      await bus.execute({ name: 'metal.completeOperation', payload: { nodeId, workflowId }, actor: 'test' });
    }
    const token = async (tokenId: string, tenantId: string) =>
      (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role: 'tenant', tenantId } })).json().token as string;
    const mine = await token('tenant-a-token', 'tenant-a');
    const theirs = await token('tenant-b-token', 'tenant-b');
    await app.inject({ method: 'PUT', url: '/v1/secrets/foreign-secret', payload: { kind: 'generic', value: 'v' } });

    const deploy = (nodeId: string, t: string) =>
      app.inject({ method: 'POST', url: '/v1/commands/metal.deploy', payload: deployBody(nodeId), headers: bearer(t) });
    const own = await deploy('own-node', mine);
    const foreign = await deploy('foreign-node', theirs);
    expect([own.statusCode, foreign.statusCode]).toEqual([201, 201]);
    const ownWorkflow = own.json().events[0].data.workflowId as string;
    const foreignWorkflow = foreign.json().events[0].data.workflowId as string;
    expect(own.json().events[0].data.tenantId).toBe('tenant-a');

    // Commands: another tenant's node is NOT_FOUND (not 403), a free ready node can be claimed, a tenant cannot act for another.
    const refused = await app.inject({ method: 'POST', url: '/v1/commands/metal.undeploy', payload: { nodeId: 'foreign-node' }, headers: bearer(mine) });
    expect([refused.statusCode, refused.json().code]).toEqual([404, 'NOT_FOUND']);
    expect((await deploy('foreign-node', mine)).json().code).toBe('NOT_FOUND');
    const impersonating = await app.inject({
      method: 'POST',
      url: '/v1/commands/metal.rescue',
      payload: { nodeId: 'free-node', tenantId: 'tenant-b' },
      headers: bearer(mine),
    });
    expect(impersonating.json().code).toBe('FORBIDDEN');
    const siteCreate = await app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'dc2', name: 'x' }, headers: bearer(mine) });
    expect(siteCreate.json().code).toBe('FORBIDDEN');
    const last = await env.store.streamLastSequence();
    await env.readers.get('nodes')!.waitFor(last, 5_000);
    await env.readers.get('secrets')!.waitFor(last, 5_000);

    // What the tenant must see, so the sweep below cannot pass by hiding everything.
    const list = (await app.inject({ url: '/v1/nodes', headers: bearer(mine) })).json();
    expect(list.items.map((n: { nodeId: string; tenantId: string }) => [n.nodeId, n.tenantId])).toEqual([['own-node', 'tenant-a']]);
    expect((await app.inject({ url: '/v1/nodes/own-node', headers: bearer(mine) })).statusCode).toBe(200);
    const ownHistory = (await app.inject({ url: '/v1/events?aggregate=metal.node/own-node', headers: bearer(mine) })).json();
    expect(ownHistory.items.map((e: { type: string }) => e.type)).toEqual(['NodeOperationRequested']);
    expect((await app.inject({ url: '/v1/sites/dc1', headers: bearer(mine) })).statusCode).toBe(200);
    // An operator sees everything, with the owner.
    expect((await app.inject({ url: '/v1/nodes/foreign-node' })).json().tenantId).toBe('tenant-b');

    // Every GET route the API documents, each parameter replaced by a foreign resource's id.
    const foreignIds = ['foreign-node', foreignWorkflow, 'foreign-secret', 'tenant-b', 'tenant-b-token', 'bootstrap-admin'];
    const substitutes: Record<string, string[]> = {
      nodeId: ['foreign-node', 'free-node'],
      workflowId: [foreignWorkflow],
      secretId: ['foreign-secret'],
      tokenId: ['tenant-b-token', 'bootstrap-admin'],
      siteId: ['dc1'],
      name: ['nodes', 'tokens'],
    };
    const queries: Record<string, string[]> = {
      '/v1/events': [
        `aggregate=metal.node/foreign-node`,
        `aggregate=metal.workflow/${foreignWorkflow}`,
        'aggregate=auth.token/tenant-b-token',
        'aggregate=secrets.secret/foreign-secret',
      ],
    };
    const paths = (app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
    const getRoutes = Object.entries(paths)
      .filter(([, methods]) => 'get' in methods)
      .map(([path]) => path)
      .filter((path) => path !== '/v1/events/stream');
    expect(getRoutes).toEqual(
      expect.arrayContaining([
        '/v1/nodes',
        '/v1/nodes/{nodeId}',
        '/v1/nodes/{nodeId}/workflows',
        '/v1/workflows/{workflowId}',
        '/v1/secrets',
        '/v1/tokens',
        '/v1/events',
      ]),
    );
    let calls = 0;
    for (const route of getRoutes) {
      const params = [...route.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      let urls = [route];
      for (const p of params) urls = urls.flatMap((u) => (substitutes[p] ?? ['x']).map((id) => u.replace(`{${p}}`, id)));
      urls = urls.flatMap((u) => (queries[u] ? queries[u].map((q) => `${u}?${q}`) : [u]));
      for (const url of urls) {
        const res = await app.inject({ url, headers: bearer(mine) });
        calls++;
        const named = foreignIds.filter((id) => url.includes(id));
        // Naming a foreign resource is answered as if it did not exist; a refusal may echo the request, nothing else.
        if (named.length > 0) expect([res.statusCode, res.json().code], url).toEqual([404, 'NOT_FOUND']);
        else expect(res.statusCode, url).toBeLessThan(500);
        const body = named.reduce((text, id) => text.replaceAll(id, ''), res.body);
        for (const id of foreignIds) expect(body.includes(id), `${url} answered ${res.statusCode} with ${id}: ${res.body.slice(0, 300)}`).toBe(false);
      }
    }
    expect(calls).toBeGreaterThan(15);

    expect((await app.inject({ url: '/v1/nodes/own-node/workflows', headers: bearer(mine) })).statusCode).toBe(200);
    expect(ownWorkflow).not.toBe(foreignWorkflow);
  });
});
