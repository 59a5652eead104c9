import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { Projector } from '../../services/projectors/projector.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { tokensProjection } from '../../projections/tokens/projector.ts';
import type { Projection } from '../../projections/runtime/projection.ts';
import { Streams } from '../../schemas/subjects.ts';
import { startApi } from '../support/apiFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { waitForCheckpoint } from '../properties/harness.ts';

type Env = Awaited<ReturnType<typeof startApi>>;

/** Replaces a running projector with a fresh one on the same files, as a restart of its process would. */
async function restartProjector(env: Env, projection: Projection): Promise<Projector> {
  await env.projectors.get(projection.name)!.stop();
  const projector = new Projector(env.store, projection, new ReadModelFiles(env.dataDir, projection.name), env.log);
  env.projectors.set(projection.name, projector);
  await projector.start();
  return projector;
}

async function enrollNodes(env: Env, ids: string[]): Promise<number> {
  await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
  let seq = 0;
  for (const id of ids) seq = (await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(id), actor: 'test' })).seq;
  return seq;
}

const nodeIdsServed = async (env: Env) => {
  const res = await env.app.inject({ url: '/v1/nodes' });
  return {
    status: res.statusCode,
    code: res.json().code as string | undefined,
    ids: res.statusCode === 200 ? (res.json().items as { nodeId: string }[]).map((n) => n.nodeId) : [],
  };
};

describe('read models heal', () => {
  it('a revoked token stops working after its read model file was deleted and rebuilt (regression: the API kept reading the deleted file)', async () => {
    await using env = await startApi();
    const created = (await env.app.inject({ method: 'POST', url: '/v1/tokens', payload: { role: 'operator' } })).json();
    await env.readers.get('tokens')!.waitFor(created.seq, 5_000);
    const asOperator = () => env.app.inject({ url: '/v1/sites', headers: { authorization: `Bearer ${created.token}` } });
    expect((await asOperator()).statusCode).toBe(200);

    // The file goes away while the API has it open; its projector starts over into a new file at the same path.
    await env.projectors.get('tokens')!.stop();
    const files = new ReadModelFiles(env.dataDir, 'tokens');
    files.remove(files.current());
    const projector = await restartProjector(env, tokensProjection);
    const revoked = (await env.app.inject({ method: 'DELETE', url: `/v1/tokens/${created.tokenId}` })).json();
    await waitForCheckpoint(projector, revoked.seq);

    const refused = await asOperator();
    expect(refused.statusCode).toBe(401);
    expect(refused.json().code).toBe('UNAUTHENTICATED');
  });

  it('a read model file deleted under a running projector is rebuilt, and authentication holds meanwhile', async () => {
    await using env = await startApi();
    const created = (await env.app.inject({ method: 'POST', url: '/v1/tokens', payload: { role: 'operator' } })).json();
    await env.readers.get('tokens')!.waitFor(created.seq, 5_000);
    const files = new ReadModelFiles(env.dataDir, 'tokens');
    const deleted = files.current();
    files.remove(deleted);
    // Until the projector notices, the API finds no file: tokens are checked against the log instead.
    const revoked = (await env.app.inject({ method: 'DELETE', url: `/v1/tokens/${created.tokenId}` })).json();
    expect((await env.app.inject({ url: '/v1/sites', headers: { authorization: `Bearer ${created.token}` } })).statusCode).toBe(401);
    await expect.poll(() => files.current() !== deleted && env.readers.get('tokens')!.checkpoint() >= revoked.seq, { timeout: 15_000 }).toBe(true);
    expect((await env.app.inject({ url: `/v1/tokens/${created.tokenId}` })).json()).toMatchObject({ tokenId: created.tokenId, revoked: true });
  });

  it('a corrupt read model file is rebuilt from the log; meanwhile only its routes answer 503 (regression: the shared projector process crash-looped)', async () => {
    await using env = await startApi();
    const last = await enrollNodes(env, ['n1', 'n2', 'n3']);
    await waitForCheckpoint(env.projectors.get('nodes')!, last);
    await env.projectors.get('nodes')!.stop();
    writeFileSync(new ReadModelFiles(env.dataDir, 'nodes').current(), 'this is not a database\n'.repeat(512));

    expect(await nodeIdsServed(env)).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
    expect((await env.app.inject({ url: '/v1/sites/dc1' })).json()).toMatchObject({ siteId: 'dc1', nodeCount: 3 });

    // Starting on the corrupt file does not fail: the projector rebuilds it in the background.
    await restartProjector(env, nodesProjection);
    await expect.poll(async () => (await nodeIdsServed(env)).ids, { timeout: 15_000 }).toEqual(['n1', 'n2', 'n3']);
  });

  it('a read model file overwritten under a running projector is rebuilt; its routes answer 200 or 503, never 500', async () => {
    await using env = await startApi();
    const last = await enrollNodes(env, ['n1', 'n2']);
    await waitForCheckpoint(env.projectors.get('nodes')!, last);
    expect((await nodeIdsServed(env)).ids).toEqual(['n1', 'n2']);
    writeFileSync(new ReadModelFiles(env.dataDir, 'nodes').current(), 'garbage'.repeat(4096));
    await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n3'), actor: 'test' });

    const seen = new Set<number>();
    for (let i = 0; ; i++) {
      const served = await nodeIdsServed(env);
      seen.add(served.status);
      if (served.ids.length === 3) break;
      if (i > 300) throw new Error(`nodes never healed; last ${JSON.stringify(served)}`);
      await sleep(50);
    }
    expect(
      [...seen].every((s) => s === 200 || s === 503),
      `statuses seen: ${[...seen].join(',')}`,
    ).toBe(true);
    expect((await env.app.inject({ url: '/readyz' })).statusCode).toBe(200);
  });

  it('a projector whose durable consumer is deleted recreates it from its checkpoint and carries on', async () => {
    await using env = await startApi();
    const first = await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    const sites = env.projectors.get('sites')!;
    await waitForCheckpoint(sites, first.seq);
    await env.store.jsm.consumers.delete(Streams.events.name, sites.durable);
    const second = await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc2', name: 'DC 2' }, actor: 'test' });
    await waitForCheckpoint(sites, second.seq, 15_000);
    expect(((await env.app.inject({ url: '/v1/sites' })).json().items as { siteId: string }[]).map((s) => s.siteId)).toEqual(['dc1', 'dc2']);
  });
});
