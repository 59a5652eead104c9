import { describe, expect, it } from 'vitest';

import { clientFor, requestsTo, simulate, trees } from './harness.ts';

const image = 'http://127.0.0.1:9/images/install.iso';

describe.each(trees)('virtual media dialects on $tree', (facts) => {
  it('uses a slot that lists no MediaTypes as the CD (AMI MegaRAC)', async () => {
    const sim = await simulate(facts.tree, { dialect: { mediaTypes: 'none' } });
    expect(sim.resource(facts.cdMediaUri)?.MediaTypes).toBeUndefined();
    const { mediaUri } = await clientFor(sim).insertMedia(image);
    expect(sim.insertedMedia()).toBe(image);
    expect(sim.resource(mediaUri)).toMatchObject({ Image: image, Inserted: true });
  });

  it('finds the media under the ComputerSystem when the BMC keeps it there', async () => {
    const sim = await simulate(facts.tree, { dialect: { mediaUnder: 'system' } });
    const { mediaUri } = await clientFor(sim).insertMedia(image);
    expect(mediaUri.toLowerCase().startsWith(`${facts.systemUri.toLowerCase()}/virtualmedia/`)).toBe(true);
    expect(sim.insertedMedia()).toBe(image);
  });

  it('inserts again without Inserted and WriteProtected when the BMC refuses them', async () => {
    const sim = await simulate(facts.tree, { dialect: { insertFlags: 'imageOnly' } });
    await clientFor(sim).insertMedia(image);
    const inserts = sim.requestLog.filter((r) => r.method !== 'GET' && (r.body as { Image?: unknown } | undefined)?.Image === image);
    expect(inserts.map((r) => r.status)).toEqual([400, 200]);
    expect(inserts[0]?.body).toMatchObject({ Inserted: true });
    expect(inserts[1]?.body).not.toHaveProperty('Inserted');
    expect(inserts[1]?.body).not.toHaveProperty('WriteProtected');
    expect(sim.insertedMedia()).toBe(image);
  });

  it("switches remote media on by AMI's OEM action before the first insert where the BMC keeps it off", async () => {
    const sim = await simulate(facts.tree, { dialect: { vendor: 'AMI', remoteMedia: 'disabled' }, mediaDelayMs: 20 });
    const managerUri = facts.cdMediaUri.replace(/\/VirtualMedia\/.*$/, '');
    expect(sim.resource(`${managerUri}/VirtualMedia`)).toMatchObject({ Members: [] });
    const { mediaUri } = await clientFor(sim).insertMedia(image);
    expect(mediaUri).toBe(facts.cdMediaUri);
    expect(requestsTo(sim, 'POST', `${managerUri}/Actions/Oem/Ami/VirtualMedia.EnableRMedia`).map((r) => r.body)).toEqual([{ RMediaState: 'Enable' }]);
    expect(requestsTo(sim, 'PATCH', managerUri)).toEqual([]);
    expect(sim.insertedMedia()).toBe(image);
  });

  it('hides the slots while remote media is off (what the switch is for)', async () => {
    const sim = await simulate(facts.tree, { dialect: { vendor: 'AMI', remoteMedia: 'disabled' } });
    const basic = `Basic ${Buffer.from('bc-admin:sim-Pa55word!').toString('base64')}`;
    const res = await fetch(`${sim.url}${facts.cdMediaUri}`, {
      method: 'PATCH',
      headers: { Authorization: basic },
      body: JSON.stringify({ Image: image, Inserted: true }),
    });
    expect(res.status).toBe(404);
    expect(sim.insertedMedia()).not.toBe(image);
  });
});
