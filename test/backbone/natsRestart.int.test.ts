import { describe, expect, it } from 'vitest';
import { listNodes } from '../../projections/nodes/queries.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';

const enroll = enrollPayload;

describe('nats-server restart', () => {
  it('loses no acknowledged event; commands and projectors carry on after the server comes back', async () => {
    await using env = await startBackbone();
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 't' });
    for (let i = 0; i < 5; i++) await env.bus.execute({ name: 'metal.enroll', payload: enroll(`before-${i}`), actor: 't' });
    await env.nats.restart();
    let seq = 0;
    for (let i = 0; i < 5; i++) {
      for (let attempt = 0; ; attempt++) {
        try {
          seq = (await env.bus.execute({ name: 'metal.enroll', payload: enroll(`after-${i}`), actor: 't', commandId: `after-enroll-${i}` })).seq;
          break;
        } catch (err) {
          // While the client reconnects a command may fail UNAVAILABLE; retrying with the same id is safe.
          if ((err as { code?: string }).code !== 'UNAVAILABLE' || attempt > 50) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }
    const nodes = env.readers.get('nodes')!;
    await nodes.waitFor(seq, 30_000);
    expect(
      listNodes(nodes.db(), { limit: 100 })
        .items.map((n) => n.nodeId)
        .sort(),
    ).toEqual([...[0, 1, 2, 3, 4].map((i) => `after-${i}`), ...[0, 1, 2, 3, 4].map((i) => `before-${i}`)]);
    expect(await env.store.streamLastSequence()).toBe(11);
  });
});
