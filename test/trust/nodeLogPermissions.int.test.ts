import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { brokerConnectOptions } from '../../services/platform/nats/brokerConnection.ts';
import type { RoleGrant } from '../../services/trust/broker/permissions.ts';
import { issueServiceCredentials } from '../../services/trust/broker/userCredentials.ts';
import { startTestBroker, type TestBroker } from './brokerFixture.ts';

let broker: TestBroker;
let cp: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  broker = await startTestBroker();
  const service = await issueServiceCredentials(broker.material, 'test-control-plane');
  cp = await connect({ servers: broker.server.url, ...brokerConnectOptions(service) });
  jsm = await ensureStreams(cp, { streamReplicas: 1, duplicateWindowMs: 120_000 });
});

afterAll(async () => {
  await cp?.close();
  await broker?.[Symbol.asyncDispose]();
});

/** The subjects the server refused this connection's publishes on, collected until it closes. */
function refusals(nc: NatsConnection): string[] {
  const subjects: string[] = [];
  const events = nc.status();
  void (async () => {
    for await (const s of events) {
      if (s.type === 'error' && s.error instanceof PermissionViolationError && s.error.operation === 'publish') subjects.push(s.error.subject);
    }
  })();
  return subjects;
}

/**
 * Publishes a line on each of `own` and `forged` and says which the broker stored in BC_LOGS and which it refused
 * (waiting for as many refusals as forgeries, then a moment for any stray one).
 */
async function attempt(grant: RoleGrant, own: string[], forged: string[]): Promise<{ stored: string[]; refused: string[] }> {
  const { nc } = await broker.connectAgent(grant);
  const seen = refusals(nc);
  const subjects = [...own, ...forged];
  for (const subject of subjects) nc.publish(subject, JSON.stringify({ text: `from ${JSON.stringify(grant)}` }));
  await nc.flush();
  await expect.poll(() => seen.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(forged.length);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const stored: string[] = [];
  for (const subject of subjects) {
    const info = await jsm.streams.info(Streams.logs.name, { subjects_filter: subject });
    if ((info.state.subjects?.[subject] ?? 0) > 0) stored.push(subject);
  }
  await nc.close();
  return { stored, refused: [...seen].sort() };
}

describe('node log subjects under broker permissions', () => {
  test("a site agent prints its own site's agent and serial lines, and nothing for another site or as a machine's agent", async () => {
    const own = [Subjects.nodeLog('dc1', 'n1', 'site-agent'), Subjects.nodeLog('dc1', 'n2', 'serial')];
    const forged = [Subjects.nodeLog('dc2', 'n9', 'site-agent'), Subjects.nodeLog('dc1', 'n1', 'ramdisk'), Subjects.nodeLog('dc1', 'n1', 'node-agent')];
    const result = await attempt({ role: 'site', agentId: 'site-dc1', siteId: 'dc1' }, own, forged);
    expect(result.stored).toEqual(own);
    expect(result.refused).toEqual([...forged].sort());
  });

  test("a ramdisk prints its own node's ramdisk lines only: not another node's, not as the site agent or the installed host", async () => {
    const own = Subjects.nodeLog('dc1', 'n3', 'ramdisk');
    const forged = [
      Subjects.nodeLog('dc1', 'n4', 'ramdisk'),
      Subjects.nodeLog('dc1', 'n3', 'site-agent'),
      Subjects.nodeLog('dc1', 'n3', 'serial'),
      Subjects.nodeLog('dc1', 'n3', 'node-agent'),
    ];
    const result = await attempt({ role: 'node', agentId: 'ramdisk-n3-abcdefgh', siteId: 'dc1', nodeId: 'n3' }, [own], forged);
    expect(result.stored).toEqual([own]);
    expect(result.refused).toEqual([...forged].sort());
  });

  test("an installed host's node agent (a tenant's machine) cannot pass for the ramdisk that wiped it", async () => {
    const own = Subjects.nodeLog('dc1', 'n5', 'node-agent');
    const forged = [Subjects.nodeLog('dc1', 'n5', 'ramdisk'), Subjects.nodeLog('dc1', 'n6', 'node-agent')];
    const result = await attempt({ role: 'node', agentId: 'node-n5', siteId: 'dc1', nodeId: 'n5' }, [own], forged);
    expect(result.stored).toEqual([own]);
    expect(result.refused).toEqual([...forged].sort());
  });

  test('a line larger than the stream takes is not stored', async () => {
    const { nc } = await broker.connectAgent({ role: 'node', agentId: 'ramdisk-n7-abcdefgh', siteId: 'dc1', nodeId: 'n7' });
    const subject = Subjects.nodeLog('dc1', 'n7', 'ramdisk');
    nc.publish(subject, 'x'.repeat(16 << 10));
    nc.publish(subject, 'small');
    await nc.flush();
    await expect.poll(async () => (await jsm.streams.info(Streams.logs.name, { subjects_filter: subject })).state.subjects?.[subject] ?? 0).toBe(1);
    const last = await (await jetstreamManager(cp)).streams.getMessage(Streams.logs.name, { last_by_subj: subject });
    expect(last?.string()).toBe('small');
    await nc.close();
  });
});
