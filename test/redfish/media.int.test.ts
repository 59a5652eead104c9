import { describe, expect, it } from 'vitest';

import { clientFor, requestsTo, simulate, trees, writes } from './harness.ts';

const image = 'http://127.0.0.1:9/images/ramdisk.iso';

describe.each(trees)('virtual media round trip on $tree', (facts) => {
  it(`mounts and unmounts the CD slot by ${facts.mediaBy}`, async () => {
    const sim = await simulate(facts.tree, { mediaDelayMs: 20 });
    const client = clientFor(sim);
    expect((await client.insertMedia(image)).mediaUri).toBe(facts.cdMediaUri);
    expect(sim.resource(facts.cdMediaUri)).toMatchObject({ Image: image, Inserted: true });
    await client.ejectMedia();
    expect(sim.resource(facts.cdMediaUri)).toMatchObject({ Inserted: false });
    const methods = new Set(writes(sim).map((r) => r.method));
    expect([...methods]).toEqual([facts.mediaBy === 'actions' ? 'POST' : 'PATCH']);
  });
});

describe('virtual media on hpe-ilo5-dl325 (actions)', () => {
  const cd = '/redfish/v1/Managers/1/VirtualMedia/2';

  it('inserts and ejects through the standard actions, never PATCH', async () => {
    const sim = await simulate('hpe-ilo5-dl325', { mediaDelayMs: 60 });
    const client = clientFor(sim);
    const started = Date.now();
    expect(await client.insertMedia(image)).toEqual({ changed: true, mediaUri: cd });
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(sim.resource(cd)).toMatchObject({ Image: image, Inserted: true, ConnectedVia: 'URI' });
    const inserts = requestsTo(sim, 'POST', `${cd}/Actions/VirtualMedia.InsertMedia`);
    expect(inserts).toHaveLength(1);
    expect(inserts[0]?.body).toMatchObject({ Image: image, Inserted: true });

    expect(await client.ejectMedia()).toEqual({ changed: true, mediaUri: cd });
    expect(sim.resource(cd)).toMatchObject({ Inserted: false, ConnectedVia: 'NotConnected' });
    expect(requestsTo(sim, 'POST', `${cd}/Actions/VirtualMedia.EjectMedia`)).toHaveLength(1);
    expect(writes(sim).filter((r) => r.method === 'PATCH')).toEqual([]);
    // The floppy/USB slot (VirtualMedia/1) is never touched.
    expect(sim.requestLog.some((r) => /VirtualMedia\/1\//.test(r.path))).toBe(false);
  });

  it('uses the HPE OEM action when the standard one is absent', async () => {
    const sim = await simulate('hpe-ilo5-dl325');
    const media = sim.resource(cd);
    if (media) delete media.Actions;
    await clientFor(sim).insertMedia(image);
    expect(requestsTo(sim, 'POST', `${cd}/Actions/Oem/Hpe/HpeiLOVirtualMedia.InsertVirtualMedia`)).toHaveLength(1);
    expect(sim.resource(cd)).toMatchObject({ Image: image, Inserted: true });
  });

  it('is a no-op when the same image is already inserted', async () => {
    const sim = await simulate('hpe-ilo5-dl325');
    const client = clientFor(sim);
    await client.insertMedia(image);
    const before = writes(sim).length;
    expect((await client.insertMedia(image)).changed).toBe(false);
    expect(writes(sim)).toHaveLength(before);
  });
});

describe('virtual media on dmtf-public-tower (PATCH fallback)', () => {
  const cd = '/redfish/v1/Managers/BMC/VirtualMedia/CD1';

  it('ejects the image the tree starts with, then inserts ours, all by PATCH', async () => {
    const sim = await simulate('dmtf-public-tower', { mediaDelayMs: 30 });
    expect(sim.resource(cd)).toMatchObject({ Inserted: true, Image: 'redfish.dmtf.org/freeImages/freeOS.1.1.iso' });
    const client = clientFor(sim);
    await client.insertMedia(image);
    const patches = requestsTo(sim, 'PATCH', cd);
    expect(patches.map((p) => p.body)).toEqual([
      { Image: null, Inserted: false },
      { Image: image, Inserted: true },
    ]);
    expect(patches.every((p) => p.ifMatch !== undefined)).toBe(true);
    expect(sim.resource(cd)).toMatchObject({ Image: image, Inserted: true, ConnectedVia: 'URI' });
    expect(writes(sim).filter((r) => r.method === 'POST')).toEqual([]);

    await client.ejectMedia();
    expect(sim.resource(cd)).toMatchObject({ Inserted: false });
    expect((await client.ejectMedia()).changed).toBe(false);
    expect(requestsTo(sim, 'PATCH', cd)).toHaveLength(3);
  });
});
