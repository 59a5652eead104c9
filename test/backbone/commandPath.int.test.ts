import { describe, expect, it } from 'vitest';
import { getNode, listNodes } from '../../projections/nodes/queries.ts';
import { listSites } from '../../projections/sites/queries.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';

const enroll = enrollPayload;

describe('command path', () => {
  it('enrolls a node at an existing site and projects it', async () => {
    await using env = await startBackbone();
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    const payload = { ...enroll('n1'), macs: ['52-54-00-AA-BB-01'] };
    const result = await env.bus.execute({ name: 'metal.enroll', payload, actor: 'test', commandId: 'enroll-n1-0001' });
    expect(result).toMatchObject({ commandId: 'enroll-n1-0001', aggregate: { type: 'metal.node', id: 'n1' }, duplicate: false });
    expect(result.events.map((e) => e.type)).toEqual(['NodeEnrolled']);
    const nodes = env.readers.get('nodes')!;
    await nodes.waitFor(result.seq, 5_000);
    expect(getNode(nodes.db(), 'n1')).toMatchObject({ nodeId: 'n1', state: 'enrolled', macs: ['52:54:00:aa:bb:01'] });
    await env.readers.get('sites')!.waitFor(result.seq, 5_000);
    expect(listSites(env.readers.get('sites')!.db())).toMatchObject([{ siteId: 'dc1', nodeCount: 1 }]);
  });

  it('answers a retried command id with the original result', async () => {
    await using env = await startBackbone({ projectors: false });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    const first = await env.bus.execute({ name: 'metal.enroll', payload: enroll('n1'), actor: 'test', commandId: 'enroll-n1-0001' });
    const again = await env.bus.execute({ name: 'metal.enroll', payload: enroll('n1'), actor: 'test', commandId: 'enroll-n1-0001' });
    expect(again).toEqual({ ...first, duplicate: true });
  });

  it('refuses enrolling at a missing site and appends nothing', async () => {
    await using env = await startBackbone({ projectors: false });
    await expect(env.bus.execute({ name: 'metal.enroll', payload: enroll('n1', 'nowhere'), actor: 'test' })).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
    });
    expect(await env.store.streamLastSequence()).toBe(0);
  });

  it('pages through nodes with a cursor', async () => {
    await using env = await startBackbone();
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    let last = 0;
    for (let i = 0; i < 5; i++) last = (await env.bus.execute({ name: 'metal.enroll', payload: enroll(`n${i}`), actor: 'test' })).seq;
    const nodes = env.readers.get('nodes')!;
    await nodes.waitFor(last, 5_000);
    const p1 = listNodes(nodes.db(), { limit: 2 });
    const p2 = listNodes(nodes.db(), { limit: 2, cursor: p1.nextCursor! });
    const p3 = listNodes(nodes.db(), { limit: 2, cursor: p2.nextCursor! });
    expect([...p1.items, ...p2.items, ...p3.items].map((n) => n.nodeId)).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
    expect(p3.nextCursor).toBeNull();
  });
});
