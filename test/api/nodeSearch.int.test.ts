import { describe, expect, it } from 'vitest';
import { fakeInventory } from '../metal/fakeAgent.ts';
import { startApi } from '../support/apiFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';

describe('node search', () => {
  it('finds nodes by part of their id, a MAC, or the serial, in any case, and takes % and _ literally', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { bus, app } = env;
    await bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    const nodes = [
      ['rack1-web_1', '52:54:00:aa:00:01'],
      ['rack1-db1', '52:54:00:bb:00:02'],
      ['rack2-web1', '52:54:00:cc:00:03'],
    ] as const;
    let seq = 0;
    for (const [nodeId, mac] of nodes)
      seq = (await bus.execute({ name: 'metal.enroll', payload: { ...enrollPayload(nodeId), macs: [mac] }, actor: 'test' })).seq;
    const inspection = await bus.execute({ name: 'metal.startInspection', payload: { nodeId: 'rack1-db1' }, actor: 'test' });
    const workflowId = (inspection.events[0]!.data as { workflowId: string }).workflowId;
    const inventory = { ...fakeInventory, serial: 'SN-XYZ-42', nics: [{ ...fakeInventory.nics[0]!, mac: '52:54:00:bb:00:02' }] };
    seq = (await bus.execute({ name: 'metal.recordInventory', payload: { nodeId: 'rack1-db1', workflowId, inventory }, actor: 'test' })).seq;
    const search = async (q: string) => {
      const res = await app.inject({ url: `/v1/nodes?minSeq=${seq}&q=${encodeURIComponent(q)}` });
      expect(res.statusCode).toBe(200);
      return (res.json().items as { nodeId: string }[]).map((n) => n.nodeId);
    };
    expect(await search('rack1')).toEqual(['rack1-db1', 'rack1-web_1']);
    expect(await search('WEB')).toEqual(['rack1-web_1', 'rack2-web1']);
    expect(await search('AA:00')).toEqual(['rack1-web_1']);
    expect(await search('xyz-4')).toEqual(['rack1-db1']);
    expect(await search('web_')).toEqual(['rack1-web_1']);
    expect(await search('%')).toEqual([]);
    const empty = await app.inject({ url: '/v1/nodes?q=' });
    expect(empty.json().code).toBe('VALIDATION_FAILED');

    // The list's rows: the same search and paging, with the serial the search matched and without the inventory.
    const rows = await app.inject({ url: `/v1/nodes?minSeq=${seq}&q=xyz&view=row` });
    expect(rows.json().items).toEqual([
      expect.objectContaining({ nodeId: 'rack1-db1', serial: 'SN-XYZ-42', macs: ['52:54:00:bb:00:02'], state: 'inspecting', agent: 'bcd' }),
    ]);
    expect(rows.json().items[0]).not.toHaveProperty('inventory');
    const full = await app.inject({ url: `/v1/nodes?minSeq=${seq}&q=xyz` });
    expect(full.json().items[0].inventory.serial).toBe('SN-XYZ-42');
    expect((await app.inject({ url: '/v1/nodes?view=wide' })).json().code).toBe('VALIDATION_FAILED');
  });
});
