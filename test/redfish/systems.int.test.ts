import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, requestsTo, simulate, trees } from './harness.ts';

describe.each(trees)('a BMC serving several systems ($tree)', (facts) => {
  it('drives the system its address names, and only that one', async () => {
    const sim = await simulate(facts.tree, { systems: 3, powerDelayMs: 5 });
    expect(sim.systems).toHaveLength(3);
    const second = sim.systems[1]!;
    const client = clientFor(sim, { baseUrl: sim.addressOf(second) });
    expect(await client.setPower('off')).toMatchObject({ before: 'On', after: 'Off' });
    expect(sim.systems.map((s) => s.state.powerState)).toEqual(['On', 'Off', 'On']);
    // Nothing was sent to the first system's reset target.
    expect(requestsTo(sim, 'POST', facts.resetUri)).toEqual([]);
  });

  it('reads each system its own UUID, serial and MACs, and boots each from its own CD', async () => {
    const sim = await simulate(facts.tree, { systems: 2 });
    const [a, b] = await Promise.all(sim.systems.map((s) => clientFor(sim, { baseUrl: sim.addressOf(s) }).getInventory()));
    expect(a!.productUuid).not.toBe(b!.productUuid);
    expect(a!.serial).not.toBe(b!.serial);
    expect(a!.nics.map((n) => n.mac).filter((mac) => b!.nics.some((n) => n.mac === mac))).toEqual([]);
    const image = 'http://127.0.0.1:9/b.iso';
    const media = await clientFor(sim, { baseUrl: sim.addressOf(sim.systems[1]!) }).insertMedia(image);
    expect(media.mediaUri.toLowerCase().startsWith(sim.systems[1]!.uri.toLowerCase())).toBe(true);
    expect(sim.systems[1]!.insertedMedia()).toBe(image);
    expect(sim.systems[0]!.insertedMedia()).not.toBe(image);
  });

  it('takes the identity each system is given', async () => {
    const sim = await simulate(facts.tree, {
      systems: [
        { uuid: '00000000-0000-4000-8000-00000000000a', macs: ['52:54:00:00:0a:01'] },
        { serial: 'B-2', macs: ['52:54:00:00:0b:01'] },
      ],
    });
    const a = await clientFor(sim, { baseUrl: sim.addressOf(sim.systems[0]!) }).getInventory();
    const b = await clientFor(sim, { baseUrl: sim.addressOf(sim.systems[1]!) }).getInventory();
    expect(a.productUuid).toBe('00000000-0000-4000-8000-00000000000a');
    expect(a.nics[0]?.mac).toBe('52:54:00:00:0a:01');
    expect(b).toMatchObject({ serial: 'B-2' });
    expect(b.nics[0]?.mac).toBe('52:54:00:00:0b:01');
  });

  it('reports the power a host changes by itself (the seam a VM backend uses)', async () => {
    const sim = await simulate(facts.tree, { systems: 2 });
    sim.systems[0]!.reportPowerState('Off');
    expect(await clientFor(sim, { baseUrl: sim.addressOf(sim.systems[0]!) }).getPowerState()).toBe('Off');
    expect(await clientFor(sim, { baseUrl: sim.addressOf(sim.systems[1]!) }).getPowerState()).toBe('On');
  });

  it('refuses an address that names no system when there are several (REDFISH_SYSTEM_AMBIGUOUS)', async () => {
    const sim = await simulate(facts.tree, { systems: 2 });
    expect(isRedfishError(await failureOf(clientFor(sim).getPowerState()), 'REDFISH_SYSTEM_AMBIGUOUS')).toBe(true);
    expect(isRedfishError(await failureOf(clientFor(sim, { baseUrl: `${sim.url}/redfish/v1/Systems/nope` }).getPowerState()), 'REDFISH_NOT_FOUND')).toBe(true);
  });

  it('accepts an address naming the only system, in any case and with a trailing slash', async () => {
    const sim = await simulate(facts.tree);
    expect(await clientFor(sim, { baseUrl: `${sim.url}${facts.systemUri.toUpperCase().replace('/REDFISH/V1', '/redfish/v1')}/` }).getPowerState()).toBe('On');
  });
});

describe('inventory with a NIC listed twice (duplicateMacs)', () => {
  it.each(trees)('merges interfaces with the same MAC on $tree', async (facts) => {
    const plain = await clientFor(await simulate(facts.tree)).getInventory();
    const sim = await simulate(facts.tree, { dialect: { duplicateMacs: true } });
    const listed = sim.resource(`${facts.systemUri}/EthernetInterfaces`) as { Members: unknown[] };
    expect(listed.Members).toHaveLength(plain.nics.length * 2);
    const merged = await clientFor(sim).getInventory();
    expect(merged.nics.map((n) => n.mac)).toEqual(plain.nics.map((n) => n.mac));
    expect(merged.nics.map((n) => n.id)).toEqual(plain.nics.map((n) => n.id));
  });
});
