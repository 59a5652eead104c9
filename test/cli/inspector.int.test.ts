import { spawn, execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect, PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signAgentResult, type AgentResultData } from '../../schemas/agent/agentResultCodec.ts';
import { Inboxes } from '../../schemas/subjects.ts';
import { brokerConnectOptions } from '../../services/platform/nats/brokerConnection.ts';
import { issueInspectorCredentials, issueServiceCredentials } from '../../services/trust/broker/userCredentials.ts';
import { tailFleet } from '../../scripts/cli/inspect/tailCommand.ts';
import type { FleetMessage } from '../../scripts/cli/inspect/fleetMessage.ts';
import { startTestBroker, type TestBroker } from '../trust/brokerFixture.ts';

const cli = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));

let broker: TestBroker;
let cp: NatsConnection;

beforeAll(async () => {
  broker = await startTestBroker();
  const creds = (await issueServiceCredentials(broker.material, 'test-cp')).creds;
  cp = await connect({ servers: broker.server.url, ...brokerConnectOptions({ creds, inboxPrefix: Inboxes.controlPlane }) });
}, 60_000);
afterAll(async () => {
  await cp?.close();
  await broker?.[Symbol.asyncDispose]();
});

const signer = (() => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKeyRaw: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url') };
})();

const result: AgentResultData = {
  commandId: 'cmd-1',
  kind: 'power.set',
  nodeId: 'n1',
  siteId: 'dc1',
  agentId: 'site-dc1',
  ok: true,
  errorCode: '',
  errorMessage: '',
  payload: { powerState: 'On' },
  executedAtMs: 1_700_000_000_000,
  commandNonce: 'nonce1',
};

/** The fleet's three kinds of story: an event batch, a command, an agent's signed (protobuf) result; and a join request with its bearer token. */
function publishFleetStory(): void {
  cp.publish('bc.join.node', JSON.stringify({ token: 'bcj_secret-token', siteId: 'dc1' }));
  cp.publish('bc.evt.metal.node.n1', JSON.stringify({ events: [{ type: 'NodeEnrolled', data: { nodeId: 'n1' } }] }));
  cp.publish('bc.cmd.metal.enroll', JSON.stringify({ nodeId: 'n1' }));
  cp.publish('bc.site.dc1.res.n1.cmd-1.nonce1', signAgentResult(result, signer));
}

const expectStory = (messages: Pick<FleetMessage, 'subject' | 'encoding' | 'data'>[]) => {
  expect(messages.map((m) => m.subject)).toEqual(['bc.evt.metal.node.n1', 'bc.cmd.metal.enroll', 'bc.site.dc1.res.n1.cmd-1.nonce1']);
  expect(messages[0]!.data).toEqual({ events: [{ type: 'NodeEnrolled', data: { nodeId: 'n1' } }] });
  expect(messages[1]!.data).toEqual({ nodeId: 'n1' });
  expect(messages[2]!.encoding).toBe('agent-result');
  expect(messages[2]!.data).toMatchObject({ ...result, signedBy: expect.any(String) });
  // The join request (a single-use bearer token) was published first and never reached the inspector.
  expect(JSON.stringify(messages)).not.toContain('bcj_');
};

function nextPermissionViolation(nc: NatsConnection): Promise<PermissionViolationError> {
  return (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'error' && s.error instanceof PermissionViolationError) return s.error;
    }
    throw new Error('closed without a permission violation');
  })();
}

describe('the inspector credential (read-only, bc.>)', () => {
  test('reads events, commands and agent results as JSON, not join tokens, and the broker refuses its publishes', { timeout: 60_000 }, async () => {
    const issued = await issueInspectorCredentials(broker.material, { ttlSeconds: 300 });
    expect(issued.expiresAt - Date.now() / 1000).toBeLessThanOrEqual(300);
    const inspector = await connect({ servers: broker.server.url, ...brokerConnectOptions({ creds: issued.creds, inboxPrefix: Inboxes.inspector }) });
    try {
      const lines: FleetMessage[] = [];
      const tailing = tailFleet(inspector, 'bc.>', { count: 3, json: true, write: (line) => lines.push(JSON.parse(line) as FleetMessage) });
      await inspector.flush();
      publishFleetStory();
      expect(await tailing).toBe(3);
      expectStory(lines);

      const seenByCp: string[] = [];
      const cpSub = cp.subscribe('bc.evt.>', { callback: (_err, msg) => void seenByCp.push(msg.subject) });
      await cp.flush();
      const violation = nextPermissionViolation(inspector);
      inspector.publish('bc.evt.metal.node.n1', JSON.stringify({ events: [{ type: 'NodeDecommissioned' }] }));
      const refused = await violation;
      expect(refused.operation).toBe('publish');
      expect(refused.subject).toBe('bc.evt.metal.node.n1');
      // A request (a command, a JetStream API call) is refused the same way: it cannot even be sent.
      await expect(inspector.request('bc.cmd.metal.enroll', '{}', { timeout: 2_000 })).rejects.toThrow();
      cp.publish('bc.evt.sentinel.x.y', '{}');
      await expect.poll(() => seenByCp).toContain('bc.evt.sentinel.x.y');
      expect(seenByCp).not.toContain('bc.evt.metal.node.n1');
      cpSub.unsubscribe();
    } finally {
      await inspector.close();
    }
  });

  test("as the README says: `broker creds --inspector`, then `tail 'bc.>'` with the file it wrote", { timeout: 120_000 }, async () => {
    const env = { ...process.env, BC_BROKER_DIR: broker.material.dir, BC_DATA_DIR: broker.dir };
    const out = join(broker.dir, 'inspector.creds');
    const { stdout } = await promisify(execFile)(process.execPath, [cli, '--json', 'broker', 'creds', '--inspector', '--ttl', '10m', '--out', out], {
      env,
      timeout: 60_000,
    });
    expect(JSON.parse(stdout)).toMatchObject({ creds: out, expiresAt: expect.any(String) });
    expect(statSync(out).mode & 0o077).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('NATS USER JWT');

    const tail = spawn(process.execPath, [cli, '--json', 'tail', 'bc.>', '--server', broker.server.url, '--creds', out], { env });
    let stdoutText = '';
    tail.stdout.on('data', (chunk: Buffer) => (stdoutText += chunk.toString()));
    let stderrText = '';
    tail.stderr.on('data', (chunk: Buffer) => (stderrText += chunk.toString()));
    try {
      // The CLI subscribes once it has started: until a warm-up message comes back, it may not be listening yet.
      await expect
        .poll(
          () => {
            cp.publish('bc.evt.warmup.x.y', '{}');
            return stdoutText.includes('bc.evt.warmup.x.y');
          },
          { timeout: 60_000, interval: 250 },
        )
        .toBe(true);
      publishFleetStory();
      const story = () =>
        stdoutText
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as FleetMessage)
          .filter((m) => !m.subject.startsWith('bc.evt.warmup'));
      await expect.poll(() => story().length, { timeout: 20_000 }).toBe(3);
      expectStory(story());
      expect(stderrText).toBe('');
    } finally {
      tail.kill('SIGTERM');
    }
  });
});
