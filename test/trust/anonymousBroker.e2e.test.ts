import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ephemeralKeyPair } from '../../schemas/ephemeralKey.ts';
import { signGrantRequest } from '../../schemas/secrets/grantCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { generateJoinToken } from '../../schemas/trust/joinTokens.ts';
import { hashSecret, mintToken } from '../../services/auth/bearer.ts';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { runDoctorCli } from '../support/doctorCli.ts';
import { freePort } from '../support/freePort.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';
import { startStackProcess } from '../support/stackProcess.ts';

const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();
const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'no error',
    (err: { code?: string }) => err.code,
  );

/** What an anonymous connection gets for sending `name` over NATS. */
const attempt = (nc: NatsConnection, name: string, payload: unknown) => codeOf(sendCommand(nc, name, payload, { timeoutMs: 5_000 }));

/** A grant request for `nodeId`'s BMC credentials, naming `agentId` but signed with a key the attacker made. */
async function forgedGrant(nc: NatsConnection, agentId: string, nodeId: string): Promise<string | undefined> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const publicKeyRaw = Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url');
  const request = { agentId, nodeId, ref: `secret:${nodeId}-bmc`, ephemeralPublicKey: ephemeralKeyPair().publicKeyBase64, issuedAt: new Date().toISOString() };
  const reply = await nc.request(Subjects.secretGrant, JSON.stringify(signGrantRequest(request, { privateKey, publicKeyRaw })), { timeout: 5_000 });
  return reply.json<{ ok: boolean; error?: { code: string } }>().error?.code;
}

describe('a stack started with BC_NATS_AUTH=none (attack 3 of issue 10)', () => {
  it(
    'gives an anonymous connection no credential command, no BMC password (no grant at all), and says it is anonymous on /readyz and in the doctor',
    { timeout: 360_000 },
    async () => {
      await using nats = await startTestNats();
      using dir = tempDir();
      await using stack = await startStackProcess(
        { BC_DATA_DIR: dir.path, BC_NATS_URL: nats.url, BC_NATS_AUTH: 'none', BC_SIM_MACHINES: '1', BC_SIM_BMC_PORT_BASE: '0' },
        await freePort(),
      );
      const auth = { authorization: `Bearer ${stack.token}` };
      // Enrolled: it never gets further, since its site agent is granted no BMC credentials in this mode.
      await expect
        .poll(async () => (await json(fetch(`${stack.api}/v1/nodes/sim-m001`, { headers: auth }))).state, { timeout: 120_000, interval: 500 })
        .toEqual(expect.any(String));

      const attacker = await connect({ servers: nats.url });
      try {
        // Regression: an anonymous connection minted an admin API token over bc.cmd.auth.createToken.
        const stolen = mintToken('evil');
        expect(await attempt(attacker, 'auth.createToken', { tokenId: 'evil', role: 'admin', secretHash: stolen.secretHash })).toBe(
          'COMMAND_NOT_SERVED_OVER_NATS',
        );
        expect((await fetch(`${stack.api}/v1/nodes`, { headers: { authorization: `Bearer ${stolen.token}` } })).status).toBe(401);
        const jsm = await jetstreamManager(attacker);
        await expect(jsm.direct.getMessage(Streams.events.name, { last_by_subj: 'bc.evt.auth.token.evil' })).resolves.toBeNull();

        // Every other command that mints or holds credentials, or decides whom to trust, is refused the same way.
        const joinToken = generateJoinToken();
        const refusals = {
          'auth.revokeToken': await attempt(attacker, 'auth.revokeToken', { tokenId: 'bootstrap' }),
          'siteTokens.create': await attempt(attacker, 'siteTokens.create', {
            tokenId: joinToken.tokenId,
            hash: joinToken.hash,
            siteId: 'sim',
            ttlSeconds: 600,
          }),
          'pki.createJoinToken': await attempt(attacker, 'pki.createJoinToken', {
            tokenId: joinToken.tokenId,
            hash: joinToken.hash,
            role: 'node',
            siteId: 'sim',
            nodeId: 'sim-m001',
            ttlSeconds: 600,
          }),
          'pki.useJoinToken': await attempt(attacker, 'pki.useJoinToken', {
            tokenId: joinToken.tokenId,
            presentedHash: hashSecret('x'),
            role: 'site',
            siteId: 'sim',
            agentId: 'site-sim',
          }),
          'pki.setApprovers': await attempt(attacker, 'pki.setApprovers', {
            approvers: [{ approverId: 'evil', publicKey: randomBytes(32).toString('base64') }],
            threshold: 1,
            approvalTtlSeconds: 3_600,
          }),
          'secrets.put': await attempt(attacker, 'secrets.put', { secretId: 'sim-m001-bmc', kind: 'bmc', version: 2, sealed: {} }),
          'secrets.delete': await attempt(attacker, 'secrets.delete', { secretId: 'sim-m001-bmc' }),
          'workflow.reject': await attempt(attacker, 'workflow.reject', { workflowId: 'wf-x', approverId: 'evil', signature: 'x', reason: 'x' }),
        };
        expect(Object.values(refusals)).toEqual(Object.keys(refusals).map(() => 'COMMAND_NOT_SERVED_OVER_NATS'));
        expect((await fetch(`${stack.api}/v1/nodes`, { headers: auth })).status).toBe(200);

        // Registration is first-come here, so a signature proves nothing: the grant service answers nobody.
        expect(await forgedGrant(attacker, 'site-sim', 'sim-m001')).toBe('BROKER_AUTH_REQUIRED');
        expect(await forgedGrant(attacker, 'site-elsewhere', 'sim-m001')).toBe('BROKER_AUTH_REQUIRED');
      } finally {
        await attacker.close();
      }

      expect((await json(fetch(`${stack.api}/readyz`))).warnings).toEqual([expect.objectContaining({ code: 'BROKER_AUTH_OFF' })]);
      const { status, report } = await runDoctorCli({ BC_DATA_DIR: dir.path });
      expect(status).toBe(1);
      expect(report.findings.filter((f) => f.severity === 'error')).toEqual([expect.objectContaining({ code: 'BROKER_AUTH_OFF', check: 'broker' })]);
    },
  );
});
