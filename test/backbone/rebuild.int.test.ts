import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listNodes } from '../../projections/nodes/queries.ts';
import { Projector } from '../../services/projectors/projector.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { getSite } from '../../projections/sites/queries.ts';
import { Streams } from '../../schemas/subjects.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { startApi } from '../support/apiFixture.ts';
import { enrollPayload, siteEventMetadata } from '../support/commandPayloads.ts';

const enroll = enrollPayload;

describe('read model rebuild', () => {
  it('replays into a new file, swaps it in, and the API serves the same rows throughout', async () => {
    await using env = await startApi();
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 't' });
    let seq = 0;
    for (let i = 0; i < 30; i++) seq = (await env.bus.execute({ name: 'metal.enroll', payload: enroll(`n${String(i).padStart(2, '0')}`), actor: 't' })).seq;
    const before = (await env.app.inject({ url: `/v1/nodes?limit=500&minSeq=${seq}` })).json();
    const files = new ReadModelFiles(env.dataDir, 'nodes');
    const oldFile = readFileSync(files.pointer, 'utf8');

    const rebuilding = env.app.inject({ method: 'POST', url: '/v1/admin/projections/nodes/rebuild' });
    const during = (await env.app.inject({ url: '/v1/nodes?limit=500' })).json();
    const rebuilt = await rebuilding;

    expect(rebuilt.statusCode).toBe(200);
    expect(rebuilt.json()).toMatchObject({ name: 'nodes', checkpoint: seq, lag: 0, rebuilding: false });
    expect(during.items).toHaveLength(30);
    expect(readFileSync(files.pointer, 'utf8')).not.toBe(oldFile);
    expect((await env.app.inject({ url: '/v1/nodes?limit=500' })).json()).toEqual(before);
    const next = await env.bus.execute({ name: 'metal.enroll', payload: enroll('after-rebuild'), actor: 't' });
    expect((await env.app.inject({ url: `/v1/nodes/after-rebuild?minSeq=${next.seq}` })).statusCode).toBe(200);
  });

  it('rebuilds on start when the log no longer holds the message at its checkpoint', async () => {
    await using env = await startApi();
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 't' });
    const seq = (await env.bus.execute({ name: 'metal.enroll', payload: enroll('gone'), actor: 't' })).seq;
    await env.readers.get('nodes')!.waitFor(seq, 5_000);
    await env.projectors.get('nodes')!.stop();

    // The stream is replaced by a different history (e.g. restored from another backup).
    await env.store.jsm.streams.delete(Streams.events.name);
    await ensureStreams(env.nc, env.config);
    await env.store.append(
      'bc.evt.site.site.dc2',
      {
        events: [
          { type: 'SiteCreated', version: 2, data: { siteId: 'dc2', name: 'DC 2', provisioningCidrs: [] }, metadata: siteEventMetadata('restore-1', 'dc2') },
        ],
      },
      { expectedSeq: 0, msgId: 'restore-1' },
    );
    const projector = new Projector(env.store, env.projectors.get('nodes')!.projection, new ReadModelFiles(env.dataDir, 'nodes'), env.log);
    await projector.start();
    try {
      expect(listNodes(env.readers.get('nodes')!.db(), { limit: 10 }).items).toEqual([]);
      expect((await projector.status()).checkpoint).toBe(1);
    } finally {
      await projector.stop();
    }
  });

  it('upcasts events stored at an older schema version on every read path', async () => {
    await using env = await startApi();
    const v1 = { type: 'SiteCreated', version: 1, data: { siteId: 'old', name: 'Old site' }, metadata: siteEventMetadata('legacy-1', 'old') };
    const { seq } = await env.store.append('bc.evt.site.site.old', { events: [v1] }, { expectedSeq: 0, msgId: 'legacy-1' });
    await env.readers.get('sites')!.waitFor(seq, 5_000);
    expect(getSite(env.readers.get('sites')!.db(), 'old')).toMatchObject({ siteId: 'old', provisioningCidrs: [] });
    const history = (await env.app.inject({ url: '/v1/events?aggregate=site.site/old' })).json();
    expect(history.items[0]).toMatchObject({ version: 2, data: { siteId: 'old', name: 'Old site', provisioningCidrs: [] } });
    const again = await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'old', name: 'x' } });
    expect(again.json().code).toBe('ALREADY_EXISTS');
  });

  it('declares streams idempotently and brings a drifted config back', async () => {
    await using env = await startApi();
    await ensureStreams(env.nc, env.config);
    await ensureStreams(env.nc, { ...env.config, duplicateWindowMs: 60_000 });
    const info = await env.store.jsm.streams.info(Streams.events.name);
    expect(info.config.duplicate_window).toBe(60_000 * 1_000_000);
    expect(info.config.subjects).toEqual(['bc.evt.>']);
  });
});
