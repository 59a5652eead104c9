import { describe, expect, it } from 'vitest';

import { BmcDialects, type BmcDialectName } from '../../daemon/simulator/bmc/index.ts';
import { clientFor, simulate, trees } from './harness.ts';

const image = 'http://127.0.0.1:9/images/installer.iso';
const presets = Object.keys(BmcDialects) as BmcDialectName[];

describe.each(trees)('a boot from an ISO on $tree', (facts) => {
  it.each(presets)('works against the %s dialect', async (dialect) => {
    const sim = await simulate(facts.tree, { dialect, powerDelayMs: 10, mediaDelayMs: 10, taskDurationMs: 20 });
    const client = clientFor(sim, { auth: 'auto' });
    await client.insertMedia(image);
    const armed = await client.setOneTimeBoot('Cd');
    expect(armed.target).toBe('Cd');
    const cycled = await client.setPower('cycle');
    expect(cycled.after).toBe('On');
    await expect.poll(() => sim.state.boots.map((b) => b.bootTarget)).toEqual(['Cd']);
    expect(sim.insertedMedia()).toBe(image);
    // The BIOS of both trees says UEFI: the AMI dialect no longer implies Legacy.
    if (dialect === 'ami-megarac') expect(armed).toMatchObject({ enabled: 'Continuous', mode: 'UEFI' });
    if (dialect === 'busy') expect(sim.requestLog.some((r) => r.status === 503)).toBe(true);
    if (dialect === 'deferred') expect(sim.requestLog.some((r) => r.status === 202)).toBe(true);
    if (dialect === 'no-sessions') expect(sim.requestLog.every((r) => r.auth !== 'session')).toBe(true);
  });
});
