import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { getNode } from '../../projections/nodes/queries.ts';
import { tokenCredential } from '../../projections/tokens/queries.ts';
import type { StoredEvent } from '../../schemas/envelope.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { mintToken } from '../../services/auth/bearer.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { EventHeaders } from '../../services/platform/eventStore/eventMac.ts';
import { startApi } from '../support/apiFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { waitForCheckpoint } from '../properties/harness.ts';

/** A batch that looks like one the event store wrote: what an attacker who reads `bc.evt.>` can produce. */
const lookalike = (type: string, data: unknown, aggregateType: string, aggregateId: string): string => {
  const commandId = `forged-${aggregateId}`;
  const metadata: StoredEvent['metadata'] = {
    eventId: `${commandId}-e`,
    aggregateType,
    aggregateId,
    commandId,
    commandName: 'forged',
    correlationId: commandId,
    causationId: commandId,
    actor: 'token:bootstrap',
    time: new Date().toISOString(),
  };
  return JSON.stringify({ events: [{ type, version: 1, data, metadata }] });
};

type Env = Awaited<ReturnType<typeof startApi>>;

/** Publishes raw bytes on a subject as `nats pub` would (the stream captures it) and waits until every projector passed it. */
async function publishRaw(env: Env, subject: string, payload: string | Uint8Array, hdrs?: Record<string, string | undefined>): Promise<number> {
  const ack = await jetstream(env.nc).publish(subject, payload, hdrs ? { headers: toHeaders(hdrs) } : {});
  for (const projector of env.projectors.values()) await waitForCheckpoint(projector, ack.seq);
  return ack.seq;
}

const deadLettersOf = async (env: Env, consumer: string) =>
  (await env.app.inject({ url: `/v1/dead-letters?consumer=${consumer}` })).json().items as { streamSeq: number; reason: string; detail: string }[];

describe('events not written by the event store', () => {
  it('a forged ApiTokenCreated is not projected and its token does not authenticate (regression: a raw publish minted an admin token)', async () => {
    await using env = await startApi();
    const { token, secretHash } = mintToken('t-forged');
    const seq = await publishRaw(
      env,
      Subjects.aggregateEvents('auth', 'token', 't-forged'),
      lookalike(
        'ApiTokenCreated',
        { tokenId: 't-forged', role: 'admin', tenantId: null, description: null, expiresAt: null, secretHash },
        'auth.token',
        't-forged',
      ),
    );

    expect(tokenCredential(env.projectors.get('tokens')!.db, 't-forged')).toBeUndefined();
    const refused = await env.app.inject({ url: '/v1/nodes', headers: { authorization: `Bearer ${token}` } });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().code).toBe('UNAUTHENTICATED');
    expect((await env.app.inject({ url: '/v1/tokens/t-forged' })).statusCode).toBe(404);
    expect(await deadLettersOf(env, 'projectors')).toEqual([expect.objectContaining({ streamSeq: seq, reason: 'MAC_MISSING' })]);
  });

  it('forged maintenance on a node is not applied, and the node’s own commands carry on after it', async () => {
    await using env = await startApi();
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    const enrolled = await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 'test' });
    const subject = Subjects.aggregateEvents('metal', 'node', 'n1');
    const forgedSeq = await publishRaw(
      env,
      subject,
      lookalike('NodeMaintenanceSet', { nodeId: 'n1', on: true, reason: 'forged', source: 'operator' }, 'metal.node', 'n1'),
    );

    expect(getNode(env.projectors.get('nodes')!.db, 'n1')).toMatchObject({ maintenance: false, lastSeq: enrolled.seq });
    // The aggregate skips it but accounts for its position: the next append expects the forged message's sequence.
    const fresh = new CommandBus(env.store, allCommands, { retries: 0 });
    expect(await fresh.repository.load(nodeAggregate, 'n1')).toMatchObject({ seq: forgedSeq, state: { exists: true, maintenance: false } });
    // The bus that cached the node before the forged message (retries 0: no conflict may be papered over).
    const strict = new CommandBus(env.store, allCommands, { retries: 0 });
    await strict.repository.load(nodeAggregate, 'n1');
    const set = await env.bus.execute({ name: 'metal.setMaintenance', payload: { nodeId: 'n1', on: true, reason: 'disk swap' }, actor: 'test' });
    expect(set.seq).toBeGreaterThan(forgedSeq);
    expect(set.events.map((e) => e.type)).toEqual(['NodeMaintenanceSet']);
    const cleared = await strict.execute({ name: 'metal.setMaintenance', payload: { nodeId: 'n1', on: false }, actor: 'test' });
    expect(cleared.events.map((e) => e.type)).toEqual(['NodeMaintenanceSet']);
    await waitForCheckpoint(env.projectors.get('nodes')!, cleared.seq);
    expect(getNode(env.projectors.get('nodes')!.db, 'n1')).toMatchObject({ maintenance: false, maintenanceReason: null, lastSeq: cleared.seq });

    const history = (await env.app.inject({ url: '/v1/events?aggregate=metal.node/n1' })).json().items as { seq: number }[];
    expect(history.map((e) => e.seq)).toEqual([enrolled.seq, set.seq, cleared.seq]);
    expect((await deadLettersOf(env, 'projectors')).map((d) => d.streamSeq)).toEqual([forgedSeq]);
  });

  it('a genuine batch published again, or copied to another subject, is refused or quarantined', async () => {
    // A short duplicate window, so the copies below are judged by their expectation and MAC, not deduplicated.
    await using env = await startApi({ config: { duplicateWindowMs: 500 } });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    const enrolled = await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 'test' });
    const original = await env.store.jsm.direct.getMessage(Streams.events.name, { seq: enrolled.seq });
    const copied = Object.fromEntries([EventHeaders.mac, EventHeaders.messageId, EventHeaders.expectedSeq].map((h) => [h, original!.header.get(h)]));
    await sleep(800);
    const last = await env.store.streamLastSequence();

    // Again on its own subject: the stored expectation no longer holds, and the server says so.
    const replay = jetstream(env.nc).publish(original!.subject, original!.data, { headers: toHeaders(copied) });
    await expect(replay).rejects.toMatchObject({ code: 10071 });
    expect(await env.store.streamLastSequence()).toBe(last);

    // Without the expectation it is stored, but its MAC no longer matches; on another node's subject neither.
    const stripped = await publishRaw(env, original!.subject, original!.data, { [EventHeaders.mac]: copied[EventHeaders.mac]! });
    const moved = await publishRaw(env, Subjects.aggregateEvents('metal', 'node', 'n2'), original!.data, copied);
    expect(await deadLettersOf(env, 'projectors')).toEqual([
      expect.objectContaining({ streamSeq: stripped, reason: 'MAC_INVALID' }),
      expect.objectContaining({ streamSeq: moved, reason: 'MAC_INVALID' }),
    ]);
    expect(getNode(env.projectors.get('nodes')!.db, 'n2')).toBeUndefined();
    expect((await env.bus.repository.load(nodeAggregate, 'n2')).state).toMatchObject({ exists: false });
  });

  it('a raw publish cannot take the message id of a genuine command that comes later', async () => {
    await using env = await startApi();
    const commandId = 'create-site-dc9';
    await publishRaw(env, Subjects.aggregateEvents('site', 'site', 'decoy'), '{}', { [EventHeaders.messageId]: commandId });
    const created = await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc9', name: 'DC 9' }, commandId, actor: 'test' });
    expect(created).toMatchObject({ duplicate: false, events: [{ type: 'SiteCreated' }] });
  });
});

function toHeaders(values: Record<string, string | undefined>) {
  const h = headers();
  for (const [k, v] of Object.entries(values)) if (v !== undefined) h.set(k, v);
  return h;
}
