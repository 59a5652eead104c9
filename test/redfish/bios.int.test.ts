import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, requestsTo, simulate, trees, writes } from './harness.ts';

describe.each(trees)('BIOS settings on $tree', (facts) => {
  const { name, current, next } = facts.biosAttribute;

  it('writes to the settings object and sees the change only after a reset', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 10 });
    const client = clientFor(sim);
    expect((await client.getBiosAttributes())[name]).toBe(current);

    expect(await client.setBiosAttributes({ [name]: next })).toEqual({ settingsUri: facts.biosSettingsUri });
    const patches = writes(sim).filter((r) => r.method === 'PATCH');
    expect(patches).toHaveLength(1);
    expect(patches[0]?.path).toBe(facts.biosSettingsUri);
    expect(patches[0]?.body).toEqual({ Attributes: { [name]: next } });
    expect(patches[0]?.ifMatch).toBeDefined();
    expect(sim.state.biosPending).toEqual({ [name]: next });
    expect((await client.getBiosAttributes())[name]).toBe(current);

    await client.setPower('cycle');
    await expect.poll(() => sim.state.boots.length).toBe(1);
    expect((await client.getBiosAttributes())[name]).toBe(next);
    expect(sim.state.biosPending).toEqual({});
  });

  it('refuses unknown attributes before writing anything', async () => {
    const sim = await simulate(facts.tree);
    const error = await failureOf(clientFor(sim).setBiosAttributes({ NoSuchAttribute: 'x' }));
    expect(isRedfishError(error, 'REDFISH_BAD_REQUEST')).toBe(true);
    expect((error as Error).message).toContain('NoSuchAttribute');
    expect(requestsTo(sim, 'PATCH', facts.biosSettingsUri)).toEqual([]);
  });

  it('never dials a host named in the data: absolute links are reduced to a path on the BMC', async () => {
    const sim = await simulate(facts.tree);
    const system = sim.resource(facts.systemUri) as { Bios: { '@odata.id': string } };
    // 192.0.2.0/24 is TEST-NET-1: unroutable, so a wrong dial would time out rather than reach anything.
    system.Bios = { '@odata.id': `https://192.0.2.10${system.Bios['@odata.id']}` };
    expect((await clientFor(sim, { timeoutMs: 500 }).getBiosAttributes())[name]).toBe(current);
  });
});
