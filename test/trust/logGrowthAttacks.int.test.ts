import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateIdentity } from '../../daemon/agent/identity.ts';
import { ephemeralKeyPair } from '../../schemas/ephemeralKey.ts';
import { signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { brokerConnectOptions } from '../../services/platform/nats/brokerConnection.ts';
import { AGENT_RESULT_MAX_MSG_BYTES } from '../../services/platform/nats/streams.ts';
import { createAgentUserKey } from '../../services/platform/nats/agentCredentials.ts';
import { NODE_AGENT_MAX_PAYLOAD } from '../../services/trust/broker/permissions.ts';
import { issueJoinCredentials } from '../../services/trust/broker/userCredentials.ts';
import { agentAggregate } from '../../services/trust/agent/agent.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { rawPublish } from '../support/rawNatsClient.ts';
import { startBrokerEngine } from './brokerEngineFixture.ts';

type Engine = Awaited<ReturnType<typeof startBrokerEngine>>;
type StoredEvent = { type: string; data: Record<string, unknown>; metadata: { actor: string } };

const WINDOW_MS = 1_000;
const RECORDS_PER_WINDOW = 5;
const RESULTS_MAX_BYTES = 2 << 20;
const ACCOUNT_MAX_BYTES = 1 << 30;

let engine: Engine;

const lastSeq = async () => (await (await jetstreamManager(engine.nc)).streams.info(Streams.events.name)).state.last_seq;

/** The event batches stored after `seq`, with their subjects. */
async function eventsAfter(seq: number): Promise<{ subject: string; events: StoredEvent[] }[]> {
  const jsm = await jetstreamManager(engine.nc);
  const out: { subject: string; events: StoredEvent[] }[] = [];
  for (let s = seq + 1, last = await lastSeq(); s <= last; s++) {
    const m = await jsm.streams.getMessage(Streams.events.name, { seq: s });
    if (!m) continue;
    out.push({ subject: m.subject, events: (JSON.parse(Buffer.from(m.data).toString('utf8')) as { events: StoredEvent[] }).events });
  }
  return out;
}

/** What the log says of refusals of `kind` after `seq`: the ones recorded one by one (`type`) and the ones counted. */
async function refusalsAfter(seq: number, kind: 'join' | 'registration' | 'results', type: string) {
  const batches = await eventsAfter(seq);
  const recorded = batches.flatMap((b) => b.events.filter((e) => e.type === type).map((e) => ({ ...e, subject: b.subject })));
  const counts = batches
    .filter((b) => b.subject === Subjects.aggregateEvents('trust', 'refusals', kind))
    .flatMap((b) => b.events.map((e) => e.data as { refused: number; sources: { source: string; refused: number; reasons: Record<string, number> }[] }));
  return { recorded, counts, counted: counts.reduce((n, c) => n + c.refused, 0), batches: batches.length };
}

/** The most messages a window-limited audit may append while an attack lasts `elapsedMs`: its records and one count per window. */
const growthBound = (elapsedMs: number) => (Math.ceil(elapsedMs / WINDOW_MS) + 1) * (RECORDS_PER_WINDOW + 1);

/** Sends `total` requests, `parallel` at a time, and resolves their answers. */
async function flood<T>(total: number, parallel: number, send: (i: number) => Promise<T>): Promise<T[]> {
  const answers: T[] = [];
  for (let i = 0; i < total; i += parallel) answers.push(...(await Promise.all(Array.from({ length: Math.min(parallel, total - i) }, (_, j) => send(i + j)))));
  return answers;
}

beforeAll(async () => {
  engine = await startBrokerEngine({
    refusals: { windowMs: WINDOW_MS, recordsPerWindow: RECORDS_PER_WINDOW },
    agentResultsMaxBytes: RESULTS_MAX_BYTES,
    jetStreamMaxBytes: ACCOUNT_MAX_BYTES,
  });
  for (const siteId of ['dc1', 'dc2', 'evil']) await engine.send('site.create', { siteId, name: siteId }, `site-create-${siteId}`);
  await engine.send('metal.enroll', enrollPayload('n1', 'dc1'), 'enroll-n1-0001');
}, 60_000);

afterAll(async () => {
  await engine?.[Symbol.asyncDispose]();
});

describe('log growth by unauthenticated and tenant credentials', () => {
  it(
    'refused joins appended one JoinRefused each, 1,300 in 3.4 s with the public join credential (regression): each place is recorded once per window and the rest counted',
    { timeout: 120_000 },
    async () => {
      // The attacker holds what every booting machine is handed: the public join credential.
      const attacker = await connect({ servers: engine.broker.server.url, ...brokerConnectOptions(await issueJoinCredentials(engine.broker.material)) });
      const attempts = 1_000;
      // The requests are made up front (a few keys serve them all): the flood then only sends.
      const publicKeys = [0, 1, 2, 3].map((i) => loadOrCreateIdentity(`${engine.dataDir}/joiners/${i}`).publicKeyBase64);
      const userKeys = [0, 1, 2, 3].map(() => createAgentUserKey().publicKey);
      const replyKeys = [0, 1, 2, 3].map(() => ephemeralKeyPair().publicKeyBase64);
      const bodies = Array.from({ length: attempts }, (_, i) =>
        JSON.stringify({
          token: `bcj_jt-${randomBytes(10).toString('hex')}_${randomBytes(32).toString('base64url')}`,
          publicKey: publicKeys[i % 4],
          userPublicKey: userKeys[i % 4],
          siteId: i % 2 === 0 ? 'dc1' : `s${i % 40}`,
          replyKey: replyKeys[i % 4],
        }),
      );
      const before = await lastSeq();
      const started = Date.now();
      // A genuine site agent joins while the attack runs.
      const genuine = engine.joinAgent('site', 'dc2');
      const answers = await flood(attempts, 50, async (i) => {
        const reply = await attacker.request(Subjects.join('site'), bodies[i], { timeout: 30_000, noMux: true });
        return reply.json<{ error?: { code: string } }>().error?.code;
      });
      const elapsedMs = Date.now() - started;
      expect((await genuine).agentId).toBe('site-dc2');
      await attacker.close();
      // Every attempt was refused with its code, as before.
      expect(answers.every((code) => code === 'JOIN_TOKEN_UNKNOWN')).toBe(true);

      // The log grew with the windows the attack lasted, not with its attempts (the genuine join adds three entries).
      const { recorded, counts } = await refusalsAfter(before, 'join', 'JoinRefused');
      expect(recorded.length).toBeLessThanOrEqual(growthBound(elapsedMs));
      expect(recorded.length).toBeLessThan(attempts / 10);
      // Every refusal is on record, one by one or counted, with the places the attacker claimed.
      await expect.poll(async () => (await refusalsAfter(before, 'join', 'JoinRefused')).counted, { timeout: 10_000 }).toBe(attempts - recorded.length);
      const after = await refusalsAfter(before, 'join', 'JoinRefused');
      expect(after.batches).toBeLessThanOrEqual(growthBound(Date.now() - started) + 3);
      const busiest = after.counts.flatMap((c) => c.sources).find((s) => s.source === 'site:dc1');
      expect(busiest?.reasons).toMatchObject({ JOIN_TOKEN_UNKNOWN: expect.any(Number) });
      expect(counts.length + after.counts.length).toBeGreaterThan(0);
    },
  );

  it(
    "any agent credential appended refusal events onto any agent's aggregate, 1,500 on site-sim in 5.4 s (regression): refusals land on the caller's own subject, once per window, the rest counted",
    { timeout: 120_000 },
    async () => {
      const victim = await engine.joinAgent('site', 'dc1');
      const evilSite = await engine.joinAgent('site', 'evil');
      const victimSubject = Subjects.aggregateEvents('trust', 'agent', 'site-dc1');
      const attempts = 600;
      const before = await lastSeq();
      const started = Date.now();
      // The request goes out on the attacker's own registration subject, the only one its JWT may publish.
      const subject = Subjects.agentRegistration(evilSite.agentId, evilSite.userPublicKey!);
      const registration = JSON.stringify({ agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey: evilSite.identity.publicKeyBase64 });
      const answers = await flood(attempts, 50, async () => {
        const reply = await evilSite.nc.request(subject, registration, { timeout: 30_000 });
        return reply.json<{ error?: { code: string } }>().error?.code;
      });
      const elapsedMs = Date.now() - started;
      expect(answers.every((code) => code === 'AGENT_IDENTITY_MISMATCH')).toBe(true);

      const { recorded } = await refusalsAfter(before, 'registration', 'AgentRegistrationRefused');
      // Nothing on the victim's subject: its history is its own.
      expect(recorded.filter((r) => r.subject === victimSubject)).toEqual([]);
      // On the attacker's own subject, under its NATS identity: visible, and bounded by time.
      expect(recorded.length).toBeGreaterThan(0);
      expect(recorded.length).toBeLessThanOrEqual(growthBound(elapsedMs));
      expect(recorded[0]).toMatchObject({
        subject: Subjects.aggregateEvents('trust', 'agent', evilSite.agentId),
        data: { agentId: 'site-dc1', reason: 'AGENT_IDENTITY_MISMATCH' },
        metadata: { actor: `nats:site:${evilSite.agentId}:${evilSite.userPublicKey}` },
      });
      await expect
        .poll(async () => (await refusalsAfter(before, 'registration', 'AgentRegistrationRefused')).counted, { timeout: 10_000 })
        .toBe(attempts - recorded.length);
      const { counts } = await refusalsAfter(before, 'registration', 'AgentRegistrationRefused');
      expect(counts.flatMap((c) => c.sources).map((s) => s.source)).toContain(`nats:site:${evilSite.agentId}:${evilSite.userPublicKey}`);
      // The victim's key is untouched and it still registers and answers.
      expect((await engine.bus.repository.load(agentAggregate, 'site-dc1')).state).toMatchObject({ keyId: victim.identity.keyId });
    },
  );

  it(
    "a tenant's host filled the control plane's disk through its result subjects, 100 MiB in 14 s (regression): the result intake stores nothing that answers no command sent to it, counts the refusals, and large messages are refused by the broker",
    { timeout: 120_000 },
    async () => {
      // A tenant is root on its installed host: it holds the host's node-agent credentials and signing key.
      const host = await engine.joinAgent('node', 'dc1', 'n1');
      const js = jetstream(host.nc);
      const jsm = await jetstreamManager(engine.nc);
      const stored = async () => (await jsm.streams.info(Streams.agentResults.name)).state;
      const before = await stored();
      const since = await lastSeq();
      const junk = randomBytes(100 << 10);
      // Half junk, half results the host signs with its own registered key, each on a fresh command subject of its node.
      const signed = (commandId: string, commandNonce: string) =>
        signAgentResult(
          {
            commandId,
            kind: 'inventory.report',
            nodeId: 'n1',
            siteId: 'dc1',
            agentId: host.agentId,
            ok: true,
            errorCode: '',
            errorMessage: '',
            payload: { junk: 'x'.repeat(60_000) },
            executedAtMs: Date.now(),
            commandNonce,
          },
          host.identity,
        );
      const attempts = 60;
      const attackStart = Date.now();
      const answers = await flood(attempts, 10, async (i) => {
        const commandId = `junk-${i}`;
        const nonce = randomBytes(16).toString('base64url');
        return js.publish(Subjects.agentResult('dc1', 'n1', commandId, nonce), i % 2 ? junk : signed(commandId, nonce)).then(
          () => 'stored',
          (err: Error) => err.message,
        );
      });
      // Every one was refused, with a code the host can read; BC_AGENT_RESULTS did not grow by a byte.
      for (const answer of answers) expect(answer).toMatch(/^RESULT_COMMAND_UNKNOWN: /);
      expect(await stored()).toMatchObject({ bytes: before.bytes, messages: before.messages });
      const results = await jsm.streams.info(Streams.agentResults.name);
      expect(results.config).toMatchObject({
        subjects: [Subjects.allAcceptedAgentResults],
        max_bytes: RESULTS_MAX_BYTES,
        max_msg_size: AGENT_RESULT_MAX_MSG_BYTES,
        discard: 'old',
      });
      // The stored subject is the control plane's: the host may not publish there, or store anything through JetStream.
      const direct = await js.publish(Subjects.acceptedAgentResult('dc1', 'n1', 'junk-direct', randomBytes(16).toString('base64url')), junk).then(
        () => 'stored',
        (err: Error) => err.message,
      );
      expect(direct).not.toBe('stored');
      expect(await stored()).toMatchObject({ bytes: before.bytes, messages: before.messages });

      // The refusals are counted, a window at a time, under the node they were published for: the log grows with time.
      await expect.poll(async () => (await refusalsAfter(since, 'results', 'none')).counted, { timeout: 15_000 }).toBeGreaterThan(0);
      const { counts, batches } = await refusalsAfter(since, 'results', 'none');
      expect(counts.flatMap((c) => c.sources.map((x) => x.source))).toEqual(expect.arrayContaining(['dc1/n1']));
      expect(counts.flatMap((c) => c.sources.flatMap((x) => Object.keys(x.reasons)))).toEqual(expect.arrayContaining(['RESULT_COMMAND_UNKNOWN']));
      expect(batches).toBeLessThanOrEqual(growthBound(Date.now() - attackStart));

      // A message larger than a node agent may send, written on the wire as a hostile client would: the broker refuses it.
      const big = await rawPublish(engine.broker.server.url, host.credentials!.creds, 'bc.site.dc1.res.n1.big.x', randomBytes(NODE_AGENT_MAX_PAYLOAD + 1));
      expect(big.said).toMatch(/Maximum Payload/i);
      expect((await jsm.streams.info(Streams.agentResults.name)).state.bytes).toBeLessThanOrEqual(RESULTS_MAX_BYTES);

      // The account's JetStream storage is limited, and the results stream's bound is reserved within it.
      const account = await jsm.getAccountInfo();
      expect(account.limits.max_storage).toBe(ACCOUNT_MAX_BYTES);
    },
  );
});
