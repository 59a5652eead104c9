import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { AuthorizationError, connect, PermissionViolationError, type NatsConnection, type Status } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Buckets, JetStreamApi, Streams, Subjects } from '../../schemas/subjects.ts';
import { bucketStream, ensureStreams } from '../../services/platform/nats/streams.ts';
import { brokerConnectOptions } from '../../services/platform/nats/brokerConnection.ts';
import { agentCommandFilterFor, agentDurableFor, type RoleGrant } from '../../services/trust/broker/permissions.ts';
import { revokeUser } from '../../services/trust/broker/revocation.ts';
import { issueJoinCredentials, issueServiceCredentials, issueSystemCredentials, issueUserJwt } from '../../services/trust/broker/userCredentials.ts';
import { startTestBroker, type TestBroker } from './brokerFixture.ts';

const commands = Streams.agentCommands.name;
const results = Streams.agentResults.name;
type AgentGrant = Extract<RoleGrant, { role: 'site' | 'node' }>;

let broker: TestBroker;
let cp: NatsConnection;
let cpJsm: JetStreamManager;

/** Bounds a wait for an event, so a missing event fails the test in seconds instead of at the test timeout. */
function within<T>(promise: Promise<T>, what: string, ms = 5_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Resolves with the first status event matching `match`; listening starts before the caller acts. */
function nextStatus(nc: NatsConnection, match: (s: Status) => boolean, what = 'status event'): Promise<Status> {
  const events = nc.status();
  return within(
    (async () => {
      for await (const s of events) if (match(s)) return s;
      throw new Error('connection closed before the expected status event');
    })(),
    what,
  );
}

/** What a subscription ended with: the server's permission error, or a timeout error if it stays open. */
function subscriptionEnd(nc: NatsConnection, subject: string): Promise<void | Error> {
  return within(nc.subscribe(subject).closed, `end of the subscription to ${subject}`);
}

function permissionViolation(nc: NatsConnection, subject: (s: string) => boolean): Promise<PermissionViolationError> {
  return nextStatus(nc, (s) => s.type === 'error' && s.error instanceof PermissionViolationError && subject(s.error.subject), 'permission violation').then(
    (s) => (s as Extract<Status, { type: 'error' }>).error as PermissionViolationError,
  );
}

/**
 * A stand-in for the control plane's result intake (`services/agents/resultIntake.ts`, tested on its own): it stores
 * what an agent hands it on the accepted subject, over the control-plane connection, and answers with the PubAck.
 */
/** Resolves once the server has the subscription: a result published before that would meet no responder. */
async function standInIntake(nc: NatsConnection) {
  const sub = nc.subscribe(Subjects.allAgentResults, {
    callback: (_err, msg) => {
      const [, , site, , node, command, nonce] = msg.subject.split('.');
      void jetstream(nc)
        .publish(Subjects.acceptedAgentResult(site!, node!, command!, nonce!), msg.data)
        .then((ack) => msg.respond(JSON.stringify(ack)));
    },
  });
  await nc.flush();
  return sub;
}

async function createAgentDurable(grant: AgentGrant): Promise<void> {
  await cpJsm.consumers.add(commands, { durable_name: agentDurableFor(grant), filter_subject: agentCommandFilterFor(grant), ack_policy: AckPolicy.Explicit });
}

beforeAll(async () => {
  broker = await startTestBroker();
  const service = await issueServiceCredentials(broker.material, 'test-control-plane');
  cp = await connect({ servers: broker.server.url, ...brokerConnectOptions(service) });
  cpJsm = await ensureStreams(cp, { streamReplicas: 1, duplicateWindowMs: 120_000 });
  // The command responder and the join service: replies go to agents' own inbox prefixes.
  cp.subscribe(Subjects.allAgentRegistrations, { callback: (_err, msg) => void msg.respond(JSON.stringify({ ok: true, subject: msg.subject })) });
  cp.subscribe(Subjects.allAgentKeyStatuses, { callback: (_err, msg) => void msg.respond(JSON.stringify({ ok: true, subject: msg.subject })) });
  cp.subscribe(Subjects.secretGrant, { callback: (_err, msg) => void msg.respond('grant') });
  cp.subscribe(Subjects.allJoins, { callback: (_err, msg) => void msg.respond(`welcome ${msg.subject}`) });
  await cp.flush();
});

afterAll(async () => {
  await cp?.close();
  await broker?.[Symbol.asyncDispose]();
});

describe('control-plane credentials', () => {
  test('a control-plane connection declares streams, appends events and manages consumers', async () => {
    const names = (await cpJsm.streams.names().next()).sort();
    // The declared streams and the streams behind the declared buckets (the lease KV, the blob object store).
    expect(names).toEqual(
      [
        Streams.agentCommands.name,
        Streams.agentResults.name,
        Streams.events.name,
        Streams.work.name,
        Streams.deadLetters.name,
        Streams.signals.name,
        Streams.logs.name,
        ...Object.values(Buckets).map(bucketStream),
      ].sort(),
    );
    const sub = cp.subscribe(Subjects.allEvents, { max: 1 });
    const ack = await jetstream(cp).publish(Subjects.aggregateEvents('metal', 'node', 'n1'), '{}', { msgID: 'evt-1' });
    expect(ack.stream).toBe(Streams.events.name);
    for await (const msg of sub) expect(msg.subject).toBe('bc.evt.metal.node.n1');
    const info = await cpJsm.consumers.add(Streams.events.name, { durable_name: 'cp_probe', ack_policy: AckPolicy.Explicit });
    expect(info.config.durable_name).toBe('cp_probe');
  });

  test('a connection without credentials is refused', async () => {
    await expect(connect({ servers: broker.server.url, reconnect: false })).rejects.toBeInstanceOf(AuthorizationError);
  });
});

describe('site agent', () => {
  test('a site agent pulls, acks and answers its own commands through JetStream', async () => {
    const grant = { role: 'site', agentId: 'site-dc1', siteId: 'dc1' } as const;
    await createAgentDurable(grant);
    const sent = await jetstream(cp).publish(Subjects.siteAgentCommands('dc1', 'n1'), 'cmd-1', { msgID: 'dc1-c1' });
    const { nc, publicKey } = await broker.connectAgent(grant);

    const consumer = await jetstream(nc).consumers.get(commands, agentDurableFor(grant));
    const msg = await consumer.next({ expires: 5_000 });
    expect(msg?.string()).toBe('cmd-1');
    // Its results go to the result intake, which stores them where the agent can read them back and not write.
    const intake = await standInIntake(cp);
    const stored = await jetstream(nc).publish(Subjects.agentResult('dc1', 'n1', 'dc1-c1', 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ'), 'result-1', { msgID: 'dc1-c1' });
    intake.unsubscribe();
    expect(stored.stream).toBe(results);
    expect(await msg!.ackAck()).toBe(true);

    const agentJsm = await jetstreamManager(nc, { checkAPI: false });
    const again = await agentJsm.direct.getMessage(results, {
      last_by_subj: Subjects.acceptedAgentResult('dc1', 'n1', 'dc1-c1', 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ'),
    });
    expect(again?.string()).toBe('result-1');
    const accepted = Subjects.acceptedAgentResult('dc1', 'n1', 'dc1-c2', 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ');
    const notItsToStore = permissionViolation(nc, (s) => s === accepted);
    nc.publish(accepted, 'forged');
    expect((await notItsToStore).operation).toBe('publish');
    // It registers only on the subject naming itself and its user key; the subject is what the responder trusts.
    const own = Subjects.agentRegistration('site-dc1', publicKey);
    expect((await nc.request(own, '{}', { timeout: 5_000 })).json()).toEqual({ ok: true, subject: own });
    for (const subject of [
      Subjects.command('agent.register'),
      Subjects.agentRegistration('site-dc2', publicKey),
      Subjects.agentRegistration('site-dc1', 'anonymous'),
    ]) {
      const denied = permissionViolation(nc, (s) => s === subject);
      nc.publish(subject, '{}');
      expect((await denied).operation).toBe('publish');
    }
    expect((await nc.request(Subjects.secretGrant, '{}', { timeout: 5_000 })).string()).toBe('grant');

    const info = await cpJsm.consumers.info(commands, agentDurableFor(grant));
    expect(info.num_ack_pending).toBe(0);
    expect(info.ack_floor.stream_seq).toBe(sent.seq);
  });

  test("an agent asks for its own key status (a pending rotation) and cannot ask for or listen to another agent's", async () => {
    const grant = { role: 'site', agentId: 'site-dc7', siteId: 'dc7' } as const;
    await createAgentDurable(grant);
    const { nc, publicKey } = await broker.connectAgent(grant);
    const own = Subjects.agentKeyStatus('site-dc7', publicKey);
    expect((await nc.request(own, '{}', { timeout: 5_000 })).json()).toEqual({ ok: true, subject: own });
    for (const subject of [Subjects.agentKeyStatus('site-dc8', publicKey), Subjects.agentKeyStatus('site-dc7', 'anonymous')]) {
      const denied = permissionViolation(nc, (s) => s === subject);
      nc.publish(subject, '{}');
      expect((await denied).operation).toBe('publish');
    }
    expect(await subscriptionEnd(nc, Subjects.allAgentKeyStatuses)).toBeInstanceOf(PermissionViolationError);
  });

  test("a site agent can neither pull, ack, read nor subscribe to another site's commands", async () => {
    const other = { role: 'site', agentId: 'site-dc2', siteId: 'dc2' } as const;
    await createAgentDurable(other);
    await jetstream(cp).publish(Subjects.siteAgentCommands('dc2', 'n1'), 'secret', { msgID: 'dc2-c1' });
    const { nc, inboxPrefix } = await broker.connectAgent({ role: 'site', agentId: 'site-dc3', siteId: 'dc3' });
    const otherDurable = agentDurableFor(other);

    const infoDenied = permissionViolation(nc, (s) => s === JetStreamApi.consumerInfo(commands, otherDurable));
    await expect(jetstream(nc).consumers.get(commands, otherDurable)).rejects.toBeInstanceOf(Error);
    expect((await infoDenied).operation).toBe('publish');

    const pullDenied = permissionViolation(nc, (s) => s === JetStreamApi.consumerNext(commands, otherDurable));
    nc.publish(JetStreamApi.consumerNext(commands, otherDurable), JSON.stringify({ batch: 1, expires: 1_000_000_000 }), { reply: `${inboxPrefix}.steal` });
    await pullDenied;

    const ackSubject = `$JS.ACK.${commands}.${otherDurable}.1.1.1.0.0`;
    const ackDenied = permissionViolation(nc, (s) => s === ackSubject);
    nc.publish(ackSubject, '+TERM');
    await ackDenied;

    for (const subject of [Subjects.siteAgentCommandFilter('dc2'), '_INBOX.>', 'bc.>', '$JS.ACK.>']) {
      const closedWith = await subscriptionEnd(nc, subject);
      expect(closedWith).toBeInstanceOf(PermissionViolationError);
      expect((closedWith as PermissionViolationError).operation).toBe('subscription');
    }

    const state = await cpJsm.consumers.info(commands, otherDurable);
    expect(state.num_pending).toBe(1);
    expect(state.delivered.consumer_seq).toBe(0);
  });

  test('an agent cannot create a consumer (its filter would be out of reach of subject permissions)', async () => {
    const { nc } = await broker.connectAgent({ role: 'site', agentId: 'site-dc4', siteId: 'dc4' });
    const createDenied = permissionViolation(nc, (s) => s.startsWith('$JS.API.CONSUMER.') && s.includes('CREATE'));
    const agentJsm = await jetstreamManager(nc, { checkAPI: false, timeout: 2_000 });
    await expect(
      agentJsm.consumers.add(commands, { durable_name: 'steal', filter_subject: 'bc.site.dc2.cmd.>', ack_policy: AckPolicy.Explicit }),
    ).rejects.toBeInstanceOf(Error);
    expect((await createDenied).operation).toBe('publish');
    await expect(cpJsm.consumers.info(commands, 'steal')).rejects.toMatchObject({ name: 'ConsumerNotFoundError' });
  });
});

describe('node agent', () => {
  test("a node agent runs its own commands end to end but cannot publish another node's results", async () => {
    const grant = { role: 'node', agentId: 'rd-n1-boot1', siteId: 'dc1', nodeId: 'n1' } as const;
    await createAgentDurable(grant);
    await jetstream(cp).publish(Subjects.nodeAgentCommands('dc1', 'n1'), 'wipe', { msgID: 'n1-c1' });
    const { nc } = await broker.connectAgent(grant);
    const js = jetstream(nc);

    const msg = await (await js.consumers.get(commands, agentDurableFor(grant))).next({ expires: 5_000 });
    expect(msg?.string()).toBe('wipe');
    const intake = await standInIntake(cp);
    expect((await js.publish(Subjects.agentResult('dc1', 'n1', 'n1-c1', 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ'), 'wiped', { msgID: 'n1-c1' })).stream).toBe(results);
    intake.unsubscribe();
    expect(await msg!.ackAck()).toBe(true);

    const foreign = Subjects.agentResult('dc1', 'n2', 'forged', 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ');
    const denied = permissionViolation(nc, (s) => s === foreign);
    const refused = await js.publish(foreign, 'forged', { timeout: 2_000 }).catch((err: unknown) => err);
    expect((refused as Error).cause).toBeInstanceOf(PermissionViolationError);
    expect((await denied).operation).toBe('publish');

    const grantDenied = permissionViolation(nc, (s) => s === Subjects.secretGrant);
    await expect(nc.request(Subjects.secretGrant, '{}', { timeout: 2_000 })).rejects.toBeInstanceOf(Error);
    await grantDenied;

    const siteWide = Subjects.agentResult('dc1', 'site', 'forged', 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ');
    const deniedCore = permissionViolation(nc, (s) => s === siteWide);
    nc.publish(siteWide, 'forged');
    await deniedCore;

    const stored = await cpJsm.streams.info(results, { subjects_filter: '>' });
    expect(Object.keys(stored.state.subjects ?? {})).not.toContain(foreign);
    expect(Object.keys(stored.state.subjects ?? {})).not.toContain(siteWide);
    expect(Object.keys(stored.state.subjects ?? {})).toContain(Subjects.acceptedAgentResult('dc1', 'n1', 'n1-c1', 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ'));
    // What the intake stores is the control plane's to write: not even for its own node.
    const accepted = Subjects.acceptedAgentResult('dc1', 'n1', 'n1-c2', 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ');
    const notItsToStore = permissionViolation(nc, (s) => s === accepted);
    nc.publish(accepted, 'forged');
    expect((await notItsToStore).operation).toBe('publish');
  });
});

describe('join credential', () => {
  test('an anonymous joiner can only publish a join request and read its reply', async () => {
    const join = await issueJoinCredentials(broker.material);
    expect((await issueJoinCredentials(broker.material)).creds).toBe(join.creds);
    const nc = await connect({ servers: broker.server.url, ...brokerConnectOptions(join), reconnect: false });
    try {
      const reply = await nc.request(Subjects.join('node'), 'hello', { timeout: 5_000 });
      expect(reply.string()).toBe('welcome bc.join.node');

      for (const subject of [Subjects.command('agent.register'), '$JS.API.INFO', Subjects.agentResult('dc1', 'n1', 'x', 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ')]) {
        const denied = permissionViolation(nc, (s) => s === subject);
        nc.publish(subject, '{}');
        expect((await denied).operation).toBe('publish');
      }
      for (const subject of ['bc.>', '_INBOX.>', Subjects.siteAgentCommandFilter('dc1')]) {
        expect(await subscriptionEnd(nc, subject)).toBeInstanceOf(PermissionViolationError);
      }
    } finally {
      await nc.close();
    }
  });
});

describe('revocation', () => {
  test('a revoked agent is cut off and cannot reconnect, without a server restart, and stays revoked after one', async () => {
    const grant = { role: 'node', agentId: 'rd-n9-boot1', siteId: 'dc1', nodeId: 'n9' } as const;
    await createAgentDurable(grant);
    const revoked = await broker.connectAgent(grant, { reconnect: true });
    const bystander = await broker.connectAgent({ role: 'node', agentId: 'rd-n8-boot1', siteId: 'dc1', nodeId: 'n8' });
    const system = await connect({ servers: broker.server.url, ...brokerConnectOptions(await issueSystemCredentials(broker.material)) });
    try {
      const disconnected = nextStatus(revoked.nc, (s) => s.type === 'disconnect', 'disconnect of the revoked agent');
      const closed = within(revoked.nc.closed(), 'close of the revoked agent');
      await revokeUser(broker.material, system, revoked.publicKey);

      await disconnected;
      expect(await closed).toBeInstanceOf(AuthorizationError);
      expect(revoked.nc.isClosed()).toBe(true);
      const retry = { creds: revoked.creds, inboxPrefix: revoked.inboxPrefix };
      await expect(connect({ servers: broker.server.url, ...brokerConnectOptions(retry), reconnect: false })).rejects.toBeInstanceOf(AuthorizationError);
      await bystander.nc.flush();
      expect(bystander.nc.isClosed()).toBe(false);
      await expect(issueUserJwt(broker.material, revoked.publicKey, grant)).rejects.toMatchObject({ reason: 'USER_REVOKED', code: 'PRECONDITION_FAILED' });

      await system.close();
      await broker.restart();
      await expect(connect({ servers: broker.server.url, ...brokerConnectOptions(retry), reconnect: false })).rejects.toBeInstanceOf(AuthorizationError);
      const fresh = await broker.connectAgent(grant);
      expect(fresh.nc.isClosed()).toBe(false);
    } finally {
      await system.close();
    }
  });
});
