import { randomBytes } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { listSites } from '../../projections/sites/queries.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { readAdminToken } from '../../services/auth/bootstrap.ts';
import { mintToken } from '../../services/auth/bearer.ts';
import { buildApi } from '../../services/api/server.ts';
import { createMetrics } from '../../services/api/metrics.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { EventHeaders } from '../../services/platform/eventStore/eventMac.ts';
import { sealedProviderTokens } from '../../services/stack/providerTokens.ts';
import { MasterKey } from '../../services/secrets/masterKey.ts';
import { loadReconcilerConfig } from '../../services/processes/vpsReconciler/config.ts';
import { VPS_RECONCILER_DURABLE, VpsReconciler } from '../../services/processes/vpsReconciler/reconciler.ts';
import { enrollPayload, startEngine } from '../metal/engineFixture.ts';
import { waitForCheckpoint } from '../properties/harness.ts';
import { startBackbone } from '../support/backboneFixture.ts';

const POISON = '{"not":"an event batch"}';
// The read models share one durable (`projectors`): a message is dead-lettered once for all of them.
const consumersOfEveryEvent = ['projectors', 'workflow_orchestrator'];

/** The engine (orchestrator, executor, projectors) with the HTTP API on it, as an admin calls it. */
async function startEngineWithApi() {
  const env = await startEngine();
  const config = loadConfig({}, { dataDir: env.dataDir, natsUrl: env.nats.url, logLevel: 'silent' });
  const app = await buildApi({ config, nc: env.nc, store: env.store, bus: env.bus, readers: env.readers, metrics: createMetrics() }, env.log);
  const authorization = `Bearer ${readAdminToken(env.dataDir)}`;
  const get = async (url: string, as = authorization) => app.inject({ url, headers: { authorization: as } });
  const disposeEngine = env[Symbol.asyncDispose].bind(env);
  return Object.assign(env, {
    app,
    get,
    async [Symbol.asyncDispose]() {
      await app.close();
      await disposeEngine();
    },
  });
}

describe('poison messages', () => {
  it('a poison message on bc.evt is dead-lettered once by the projectors and once by the orchestrator, which carry on (regression: the orchestrator stopped reacting and all projectors froze)', async () => {
    await using env = await startEngineWithApi();
    const poison = await jetstream(env.nc).publish(Subjects.aggregateEvents('metal', 'node', 'x'), POISON);
    // Authentic bytes that are no event batch (a writer's bug): dead-lettered as undecodable.
    const garbled = new TextEncoder().encode('[1,2,3]');
    const messageId = env.store.mac.messageId('garbled-0001');
    const subject = Subjects.aggregateEvents('site', 'site', 'garbled');
    const h = headers();
    h.set(EventHeaders.mac, env.store.mac.sign(subject, messageId, 0, garbled));
    const undecodable = await jetstream(env.nc).publish(subject, garbled, { msgID: messageId, expect: { lastSubjectSequence: 0 }, headers: h });

    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    const enrolled = await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 'test' });
    // The orchestrator reacts to what came after the poison: it starts inspecting the new node.
    await env.waitForNode('n1', (s) => s.exists && s.state !== 'enrolled', 20_000);
    for (const projector of env.projectors.values()) await waitForCheckpoint(projector, enrolled.seq);
    expect(listSites(env.projectors.get('sites')!.db).map((s) => s.siteId)).toEqual(['dc1']);

    const listed = (await env.get('/v1/dead-letters?limit=500')).json<{ items: { consumer: string; streamSeq: number; reason: string; stream: string }[] }>();
    const entries = (seq: number) => listed.items.filter((d) => d.streamSeq === seq);
    expect(
      entries(poison.seq)
        .map((d) => d.consumer)
        .sort(),
    ).toEqual([...consumersOfEveryEvent].sort());
    expect(entries(poison.seq).every((d) => d.reason === 'MAC_MISSING' && d.stream === Streams.events.name)).toBe(true);
    expect(
      entries(undecodable.seq)
        .map((d) => d.consumer)
        .sort(),
    ).toEqual([...consumersOfEveryEvent].sort());
    expect(entries(undecodable.seq).every((d) => d.reason === 'UNDECODABLE')).toBe(true);

    const ready = await env.get('/readyz', '');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({
      status: 'ready',
      deadLetters: 2 * consumersOfEveryEvent.length,
      deadLettersByConsumer: { projectors: 2, workflow_orchestrator: 2 },
    });
    expect((await env.get('/metrics', '')).body).toMatch(/bc_dead_letters\{consumer="projectors"\} 2/);

    // A restarted orchestrator folds past the poison instead of crash-looping on it.
    await env.restartOrchestrator();
    await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n2'), actor: 'test' });
    await env.waitForNode('n2', (s) => s.exists && s.state !== 'enrolled', 20_000);

    expect(
      (
        await env.app.inject({
          method: 'POST',
          url: '/v1/dead-letters/handle?consumer=projectors',
          headers: { authorization: `Bearer ${readAdminToken(env.dataDir)}` },
        })
      ).json(),
    ).toEqual({ handled: 2 });
    expect((await env.get('/v1/dead-letters?consumer=projectors')).json<{ items: unknown[] }>().items).toEqual([]);
    expect((await env.get('/v1/dead-letters?consumer=projectors&handled=true')).json<{ items: unknown[] }>().items).toHaveLength(2);
  });

  it('dead letters are for admins and operators only', async () => {
    await using env = await startEngineWithApi();
    const viewer = mintToken('t-viewer');
    const operator = mintToken('t-operator');
    for (const [tokenId, role, secretHash] of [
      ['t-viewer', 'viewer', viewer.secretHash],
      ['t-operator', 'operator', operator.secretHash],
    ] as const) {
      await env.bus.execute({ name: 'auth.createToken', payload: { tokenId, role, secretHash }, actor: 'test' });
    }
    expect((await env.get('/v1/dead-letters', `Bearer ${operator.token}`)).statusCode).toBe(200);
    expect(Object.keys((await env.get('/v1/openapi.json')).json().paths)).toContain('/v1/dead-letters');
    expect((await env.get('/v1/dead-letters', `Bearer ${viewer.token}`)).json()).toMatchObject({ code: 'FORBIDDEN' });
  });

  it('the vps reconciler dead-letters a poison message and carries on', async () => {
    await using env = await startBackbone({ projectors: false });
    const reconciler = new VpsReconciler(env.nc, env.store, loadReconcilerConfig({}, { resyncMs: 60_000 }), env.log, {
      providers: new Map(),
      tokens: sealedProviderTokens(env.store, new MasterKey(randomBytes(32))),
    });
    await reconciler.start();
    try {
      const poison = await jetstream(env.nc).publish(Subjects.aggregateEvents('vps', 'tenant', 'acme'), POISON);
      const created = await env.bus.execute({ name: 'vps.createTenant', payload: { tenantId: 'acme', name: 'Acme' }, actor: 'test' });
      await expect
        .poll(async () => (await env.store.jsm.consumers.info(Streams.events.name, VPS_RECONCILER_DURABLE)).ack_floor.stream_seq, { timeout: 10_000 })
        .toBeGreaterThanOrEqual(created.seq);
      const entry = await env.store.jsm.direct.getMessage(Streams.deadLetters.name, { last_by_subj: Subjects.deadLetter(VPS_RECONCILER_DURABLE, poison.seq) });
      expect(entry?.json()).toMatchObject({ consumer: VPS_RECONCILER_DURABLE, streamSeq: poison.seq, reason: 'MAC_MISSING', payloadHead: POISON });
    } finally {
      await reconciler.stop();
    }
  });
});
