import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { AuthorizationError, connect, type NatsConnection } from '@nats-io/transport-node';
import { join } from 'node:path';
import { loadOrCreateIdentity } from '../../daemon/agent/identity.ts';
import { connectJoinedAgent } from '../../daemon/agent/joinedConnection.ts';
import { revokeUser } from '../../services/trust/broker/revocation.ts';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Inboxes, Streams, Subjects } from '../../schemas/subjects.ts';
import { keyIdOf, ramdiskAgentId } from '../../schemas/trust/agentIds.ts';
import { parseJoinToken } from '../../schemas/trust/joinTokens.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { EventMac } from '../../services/platform/eventStore/eventMac.ts';
import { EventStore } from '../../services/platform/eventStore/eventStore.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { brokerConnectOptions } from '../../services/platform/nats/brokerConnection.ts';
import { createAgentUserKey, credsText } from '../../services/platform/nats/agentCredentials.ts';
import { issueJoinCredentials, issueServiceCredentials, issueSystemCredentials } from '../../services/trust/broker/userCredentials.ts';
import { startJoinService, type JoinService } from '../../services/trust/join/joinService.ts';
import { mintJoinToken, type CommandSender, type JoinTokenSpec } from '../../services/trust/joinToken/mint.ts';
import { joinControlPlane } from '../../daemon/agent/join.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { leaks, recordTraffic, streamMessages } from '../support/plaintextScan.ts';
import { startTestBroker, type TestBroker } from './brokerFixture.ts';

const silent = createLogger('join-agent', 'silent');
const publicKey = () => Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
const uuid = '4c4c4544-0042-3510-8052-b4c04f4a4e31';

let broker: TestBroker;
let cp: NatsConnection;
let bus: CommandBus;
let service: JoinService;
const logLines: string[] = [];
const tokens: string[] = [];
const answers: string[] = [];

const send: CommandSender = (name, payload, commandId) => bus.execute({ name, payload, commandId, actor: 'test' });
async function mint(spec: JoinTokenSpec): Promise<string> {
  const { token } = await mintJoinToken(send, spec);
  tokens.push(token);
  return token;
}

/** A joiner as a machine would be: the public join credential only, then its own issued JWT. */
async function joiner() {
  const nc = await connect({ servers: broker.server.url, ...brokerConnectOptions(await issueJoinCredentials(broker.material)), reconnect: false });
  const key = createAgentUserKey();
  return {
    nc,
    key,
    join: async (role: 'ramdisk' | 'node' | 'site', token: string, request: { siteId: string; nodeId?: string; productUuid?: string; publicKey?: string }) => {
      try {
        const accepted = await joinControlPlane(nc, { role, token, request: { publicKey: publicKey(), userPublicKey: key.publicKey, ...request } }, silent);
        answers.push(JSON.stringify(accepted));
        return accepted;
      } catch (err) {
        answers.push(JSON.stringify(err));
        throw err;
      }
    },
  };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (err: unknown) => (err instanceof PlatformError ? err.code : String(err)),
  );

beforeAll(async () => {
  broker = await startTestBroker();
  cp = await connect({ servers: broker.server.url, ...brokerConnectOptions(await issueServiceCredentials(broker.material, 'test')) });
  await ensureStreams(cp, { streamReplicas: 1, duplicateWindowMs: 120_000 });
  const store = await EventStore.open(cp, new EventMac(randomBytes(32)));
  eventStore = store;
  bus = new CommandBus(store, allCommands, { retries: 5 });
  await send('site.create', { siteId: 'dc1', name: 'DC 1' }, 'site-create-dc1');
  for (const n of ['n1', 'n2', 'n3']) await send('metal.enroll', enrollPayload(n), `enroll-${n}-000`);
  const log = createLogger('join', 'trace', { write: (line: string) => void logLines.push(line) });
  service = startJoinService(cp, store, log, { broker: { material: broker.material, jwtTtlSeconds: 600 }, refusals: { windowMs: REFUSAL_WINDOW_MS } });
  await cp.flush();
});

afterAll(async () => {
  await service?.stop();
  await cp?.close();
  await broker?.[Symbol.asyncDispose]();
});

describe('join service (broker mode)', () => {
  test('a ramdisk joins with its token, gets a JWT for its own durable and runs commands under its permissions', async () => {
    const token = await mint({ role: 'ramdisk', siteId: 'dc1', nodeId: 'n1', ttlSeconds: 600 });
    const machine = await joiner();
    const key = publicKey();
    const accepted = await machine.join('ramdisk', token, { siteId: 'dc1', nodeId: 'n1', publicKey: key });
    const agentId = ramdiskAgentId('n1', keyIdOf(key));
    expect(accepted).toMatchObject({ ok: true, agentId, inboxPrefix: `_INBOX_${agentId}`, durable: `ramdisk_${agentId}` });
    await machine.nc.close();

    const history = await historyOf('trust', 'agent', agentId);
    expect(history.map((e) => e.type)).toEqual(['AgentRegistered']);
    const creds = credsText(accepted.jwt!, machine.key.seed);
    const agent = await connect({ servers: broker.server.url, ...brokerConnectOptions({ creds, inboxPrefix: accepted.inboxPrefix! }), reconnect: false });
    try {
      await jetstream(cp).publish(Subjects.nodeAgentCommands('dc1', 'n1'), 'wipe', { msgID: 'n1-join-c1' });
      const consumer = await jetstream(agent).consumers.get(Streams.agentCommands.name, accepted.durable);
      const msg = await consumer.next({ expires: 5_000 });
      expect(msg?.string()).toBe('wipe');
      msg!.ack();
    } finally {
      await agent.close();
    }
  });

  test('a token is single-use: a second join with it is refused and audited, even racing', async () => {
    const before = await lastSeq();
    const token = await mint({ role: 'ramdisk', siteId: 'dc1', nodeId: 'n2' });
    const [a, b] = [await joiner(), await joiner()];
    const outcomes = await Promise.all([
      codeOf(a.join('ramdisk', token, { siteId: 'dc1', nodeId: 'n2' })),
      codeOf(b.join('ramdisk', token, { siteId: 'dc1', nodeId: 'n2' })),
    ]);
    expect(outcomes.sort()).toEqual(['JOIN_TOKEN_USED', 'accepted']);
    expect(await codeOf(a.join('ramdisk', token, { siteId: 'dc1', nodeId: 'n2' }))).toBe('JOIN_TOKEN_USED');
    const events = await historyOf('trust', 'joinToken', parseJoinToken(token)!.tokenId);
    expect(events.map((e) => e.type).slice(0, 3)).toEqual(['JoinTokenCreated', 'JoinTokenUsed', 'JoinRefused']);
    // Both refusals are on record: the first of this machine in the window as JoinRefused, a second one in the same
    // window counted.
    await expect.poll(async () => (await joinRefusalsAfter(before))['ramdisk:dc1/n2']?.JOIN_TOKEN_USED, { timeout: 5_000 }).toBe(2);
    await Promise.all([a.nc.close(), b.nc.close()]);
  });

  test('unknown, forged, expired, other-role, other-node and unexpected-machine joins are refused with stable codes', async () => {
    const before = await lastSeq();
    const machine = await joiner();
    const token = await mint({ role: 'ramdisk', siteId: 'dc1', nodeId: 'n3', ttlSeconds: 600 });
    const { tokenId, secret } = parseJoinToken(token)!;
    const forged = `bcj_${tokenId}_${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    const unknown = `bcj_jt-${'a'.repeat(20)}_${secret}`;
    expect(await codeOf(machine.join('ramdisk', unknown, { siteId: 'dc1', nodeId: 'n3' }))).toBe('JOIN_TOKEN_UNKNOWN');
    expect(await codeOf(machine.join('ramdisk', forged, { siteId: 'dc1', nodeId: 'n3' }))).toBe('JOIN_TOKEN_INVALID');
    expect(await codeOf(machine.join('ramdisk', 'not-a-token', { siteId: 'dc1', nodeId: 'n3' }))).toBe('JOIN_TOKEN_MALFORMED');
    expect(await codeOf(machine.join('site', token, { siteId: 'dc1' }))).toBe('JOIN_ROLE_MISMATCH');
    expect(await codeOf(machine.join('ramdisk', token, { siteId: 'dc1', nodeId: 'n2' }))).toBe('JOIN_SCOPE_MISMATCH');

    const soon = await mint({ role: 'ramdisk', siteId: 'dc1', nodeId: 'n3', expiresAt: new Date(Date.now() + 1_000).toISOString() });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await codeOf(machine.join('ramdisk', soon, { siteId: 'dc1', nodeId: 'n3' }))).toBe('JOIN_TOKEN_EXPIRED');

    const expecting = await mint({ role: 'ramdisk', siteId: 'dc1', nodeId: 'n3', expect: { productUuid: uuid } });
    expect(await codeOf(machine.join('ramdisk', expecting, { siteId: 'dc1', nodeId: 'n3' }))).toBe('JOIN_EXPECTATION_FAILED');
    expect(await codeOf(machine.join('ramdisk', expecting, { siteId: 'dc1', nodeId: 'n3', productUuid: '00000000-0000-0000-0000-000000000009' }))).toBe(
      'JOIN_EXPECTATION_FAILED',
    );
    // Refusals do not spend a token: the right machine still joins with it.
    expect(await codeOf(machine.join('ramdisk', expecting, { siteId: 'dc1', nodeId: 'n3', productUuid: uuid }))).toBe('accepted');
    expect(await codeOf(machine.join('ramdisk', token, { siteId: 'dc1', nodeId: 'n3' }))).toBe('accepted');

    // Each refusal is on record, one by one or counted, under the place the joiner claimed.
    await expect
      .poll(async () => await joinRefusalsAfter(before), { timeout: 5_000 })
      .toEqual({
        'ramdisk:dc1/n3': {
          JOIN_TOKEN_UNKNOWN: 1,
          JOIN_TOKEN_INVALID: 1,
          JOIN_TOKEN_MALFORMED: 1,
          JOIN_TOKEN_EXPIRED: 1,
          JOIN_EXPECTATION_FAILED: 2,
        },
        'ramdisk:dc1/n2': { JOIN_SCOPE_MISMATCH: 1 },
        'site:dc1': { JOIN_ROLE_MISMATCH: 1 },
      });
    await machine.nc.close();
  });

  test('a site agent joins with a site token and may use its durable and ask for grants', async () => {
    const token = await mint({ role: 'site', siteId: 'dc1' });
    const site = await joiner();
    const accepted = await site.join('site', token, { siteId: 'dc1' });
    expect(accepted).toMatchObject({ agentId: 'site-dc1', durable: 'site_dc1', inboxPrefix: '_INBOX_site-dc1' });
    await site.nc.close();
    const agent = await connect({
      servers: broker.server.url,
      ...brokerConnectOptions({ creds: credsText(accepted.jwt!, site.key.seed), inboxPrefix: accepted.inboxPrefix! }),
      reconnect: false,
    });
    try {
      cp.subscribe(Subjects.secretGrant, { max: 1, callback: (_e, m) => void m.respond('granted') });
      await cp.flush();
      expect((await agent.request(Subjects.secretGrant, '{}', { timeout: 5_000 })).string()).toBe('granted');
      const info = await jetstream(agent).consumers.get(Streams.agentCommands.name, 'site_dc1');
      expect((await info.info()).config.filter_subject).toBe('bc.site.dc1.cmd.>');
    } finally {
      await agent.close();
    }
  });

  test('an agent that joined is cut off at once when its user is revoked while other agents stay connected', async () => {
    const token = await mint({ role: 'ramdisk', siteId: 'dc1', nodeId: 'n2' });
    const { tokenId } = parseJoinToken(token)!;
    const identity = loadOrCreateIdentity(join(broker.dir, `agent-${tokenId}`));
    const joinCreds = (await issueJoinCredentials(broker.material)).creds;
    const agent = await connectJoinedAgent({
      natsUrl: broker.server.url,
      name: 'revokee',
      role: 'ramdisk',
      token,
      identity,
      siteId: 'dc1',
      nodeId: 'n2',
      joinCreds,
      log: silent,
    });
    const bystanderToken = await mint({ role: 'ramdisk', siteId: 'dc1', nodeId: 'n3' });
    const bystander = await connectJoinedAgent({
      natsUrl: broker.server.url,
      name: 'bystander',
      role: 'ramdisk',
      token: bystanderToken,
      identity: loadOrCreateIdentity(join(broker.dir, `agent-${parseJoinToken(bystanderToken)!.tokenId}`)),
      siteId: 'dc1',
      nodeId: 'n3',
      joinCreds,
      log: silent,
    });
    const system = await connect({ servers: broker.server.url, ...brokerConnectOptions(await issueSystemCredentials(broker.material)) });
    try {
      const consumer = await jetstream(agent.nc).consumers.get(Streams.agentCommands.name, agent.durable);
      expect((await consumer.info()).name).toBe(agent.durable);
      const closed = agent.nc.closed();
      await revokeUser(broker.material, system, agent.userPublicKey!);
      const reason = await Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve('still connected'), 5_000))]);
      expect(reason).toBeInstanceOf(AuthorizationError);
      expect(agent.nc.isClosed()).toBe(true);
      await bystander.nc.flush();
      expect(bystander.nc.isClosed()).toBe(false);
    } finally {
      await system.close();
      await Promise.allSettled([agent.nc.close(), bystander.nc.close()]);
    }
  });

  test("joiners share the _INBOX_join prefix and read each other's join replies (regression): each answer goes to its own inbox, sealed to its request", async () => {
    const eavesdropper = await connect({ servers: broker.server.url, ...brokerConnectOptions(await issueJoinCredentials(broker.material)), reconnect: false });
    const overheard: { subject: string; text: string }[] = [];
    // The public join credential may read the join inboxes: the strongest eavesdropper a joiner can be.
    eavesdropper.subscribe(`${Inboxes.join}.>`, { callback: (_err, msg) => void overheard.push({ subject: msg.subject, text: msg.string() }) });
    await eavesdropper.flush();
    try {
      const machine = await joiner();
      const accepted = await machine.join('ramdisk', await mint({ role: 'ramdisk', siteId: 'dc1', nodeId: 'n1' }), { siteId: 'dc1', nodeId: 'n1' });
      await machine.nc.close();
      await eavesdropper.flush();
      expect(accepted.jwt).toBeDefined();
      expect(overheard).toHaveLength(1);
      // Its own inbox (not the shared request mux), and nothing of the answer in the clear.
      expect(overheard[0]!.subject).toMatch(/^_INBOX_join\.[A-Za-z0-9]+$/);
      for (const part of [accepted.agentId, accepted.jwt!, accepted.durable!, accepted.inboxPrefix!]) expect(overheard[0]!.text).not.toContain(part);
      expect(JSON.parse(overheard[0]!.text)).toMatchObject({ ok: true, sealed: { ciphertext: expect.any(String) } });
    } finally {
      await eavesdropper.close();
    }
  });

  test('no token appears in the event log, the logs, or anything a joiner receives', async () => {
    const traffic = recordTraffic(cp, ['bc.>']);
    const token = await mint({ role: 'ramdisk', siteId: 'dc1', nodeId: 'n1' });
    const machine = await joiner();
    await machine.join('ramdisk', token, { siteId: 'dc1', nodeId: 'n1' });
    await codeOf(machine.join('ramdisk', token, { siteId: 'dc1', nodeId: 'n1' }));
    await machine.nc.close();
    await cp.flush();
    traffic.stop();
    const secrets = tokens.flatMap((t) => [t, parseJoinToken(t)!.secret]);
    expect(secrets.length).toBeGreaterThan(10);
    const events = await streamMessages(cp, Streams.events.name);
    const commands = await streamMessages(cp, Streams.agentCommands.name);
    expect(events.length).toBeGreaterThan(20);
    expect(logLines.some((l) => l.includes('agent joined'))).toBe(true);
    const haystacks = [
      ...events.map((m) => ({ where: `BC_EVENTS#${m.seq}`, text: m.text })),
      ...commands.map((m) => ({ where: `BC_AGENT_COMMANDS#${m.seq}`, text: m.text })),
      ...logLines.map((l, i) => ({ where: `log#${i}`, text: l })),
      ...answers.map((a, i) => ({ where: `answer#${i}`, text: a })),
      ...traffic.seen.filter((m) => !m.subject.startsWith('bc.join.')).map((m, i) => ({ where: `traffic#${i} ${m.subject}`, text: m.text })),
    ];
    expect(leaks(secrets, haystacks)).toEqual([]);
    // The scan can fail: the join requests themselves (what the agents sent) do hold the token.
    expect(
      leaks(
        secrets,
        traffic.seen.map((m) => ({ where: m.subject, text: m.text })),
      ).length,
    ).toBeGreaterThan(0);
  });
});

const REFUSAL_WINDOW_MS = 400;
let eventStore: EventStore;

const lastSeq = async () => (await (await jetstreamManager(cp)).streams.info(Streams.events.name)).state.last_seq;

/** Refused joins the log holds after `seq`, recorded (`JoinRefused`) or counted (`RefusalsCounted`), by claimed place and reason. */
async function joinRefusalsAfter(seq: number): Promise<Record<string, Record<string, number>>> {
  const out: Record<string, Record<string, number>> = {};
  const add = (source: string, reason: string, n: number) => ((out[source] ??= {})[reason] = (out[source][reason] ?? 0) + n);
  for (const m of await streamMessages(cp, Streams.events.name)) {
    if (m.seq <= seq) continue;
    for (const e of (JSON.parse(m.data) as { events: { type: string; data: Record<string, unknown> }[] }).events) {
      if (e.type === 'JoinRefused') {
        const d = e.data as { role: string; siteId: string; nodeId: string | null; reason: string };
        add(`${d.role}:${d.siteId}${d.nodeId ? `/${d.nodeId}` : ''}`, d.reason, 1);
      }
      if (e.type === 'RefusalsCounted') {
        for (const s of (e.data as { sources: { source: string; reasons: Record<string, number> }[] }).sources) {
          for (const [reason, n] of Object.entries(s.reasons)) add(s.source, reason, n);
        }
      }
    }
  }
  return out;
}
/** The events of one aggregate, oldest first, as the log holds them. */
async function historyOf(module: string, aggregate: string, id: string): Promise<{ type: string; data: unknown }[]> {
  const out: { type: string; data: unknown }[] = [];
  for await (const stored of eventStore.readAfter(Subjects.aggregateEvents(module, aggregate, id), 0)) out.push(...stored.batch.events);
  return out;
}
