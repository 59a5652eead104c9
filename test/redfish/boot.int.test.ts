import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, requestsTo, simulate, trees } from './harness.ts';

describe.each(trees)('one-time boot on $tree', (facts) => {
  it('arms a Pxe override that the next power-on consumes, firing onBoot with Pxe', async () => {
    const booted: string[] = [];
    const sim = await simulate(facts.tree, { systemOverrides: { PowerState: 'Off' }, powerDelayMs: 20 });
    sim.onBoot((target) => booted.push(target));
    const client = clientFor(sim);

    await client.setOneTimeBoot('Pxe');
    expect(sim.state.bootOverride).toEqual({ target: 'Pxe', enabled: 'Once' });
    const patch = requestsTo(sim, 'PATCH', facts.systemUri)[0];
    expect(patch?.body).toEqual({ Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once' } });
    expect(patch?.ifMatch).toMatch(/^W\/"/);

    await client.setPower('on');
    await expect.poll(() => booted).toEqual(['Pxe']);
    expect(sim.state.bootOverride.enabled).toBe('Disabled');

    // Consumed: the following restart boots normally.
    await client.setPower('cycle');
    await expect.poll(() => booted).toEqual(['Pxe', 'None']);
  });

  it('fires onBoot with the override on a restart of a running machine', async () => {
    const booted: string[] = [];
    const sim = await simulate(facts.tree, { onBoot: (target) => booted.push(target) });
    const client = clientFor(sim);
    await client.setOneTimeBoot('Cd');
    await client.setPower('cycle');
    await expect.poll(() => booted).toEqual(['Cd']);
  });

  it(`${facts.supportsUefiHttp ? 'accepts' : 'refuses'} UefiHttp as the tree's AllowableValues say`, async () => {
    const sim = await simulate(facts.tree);
    const attempt = clientFor(sim).setOneTimeBoot('UefiHttp');
    if (facts.supportsUefiHttp) {
      await attempt;
      expect(sim.state.bootOverride).toEqual({ target: 'UefiHttp', enabled: 'Once' });
    } else {
      expect(isRedfishError(await failureOf(attempt), 'REDFISH_UNSUPPORTED')).toBe(true);
      expect(requestsTo(sim, 'PATCH', facts.systemUri)).toHaveLength(0);
    }
  });
});
