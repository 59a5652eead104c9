import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { loadOrCreateIdentity, siteAgentId } from '../../daemon/agent/identity.ts';
import { grantedCredentialResolver, requestSecretGrant, type GrantRequester } from '../../daemon/site/grantedCredentials.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { createMetrics } from '../../services/api/metrics.ts';
import { buildApi } from '../../services/api/server.ts';
import { readAdminToken } from '../../services/auth/bootstrap.ts';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startGrantService } from '../../services/secrets/grantService.ts';
import { loadMasterKey } from '../../services/secrets/masterKey.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { filesUnder, leaks, recordTraffic, sqliteDumps, streamMessages } from '../support/plaintextScan.ts';
import { tempDir } from '../support/natsServer.ts';

const unique = (label: string) => `${label}-${randomBytes(9).toString('hex')}`;
const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'granted',
    (err: { code?: string }) => err.code,
  );

describe('sealed secrets', () => {
  it('stores secrets sealed, grants them only to the right agent, and never shows a plaintext anywhere', { timeout: 60_000 }, async () => {
    const captured: string[] = [];
    const log = createLogger('secrets-test', 'trace', { write: (line: string) => void captured.push(line) });
    await using backbone = await startBackbone();
    const { nc, store, config } = backbone;
    const spyConn = await connectNats(backbone.nats.url, 'spy');
    const traffic = recordTraffic(spyConn, ['>']);
    const responder = serveCommands(nc, backbone.bus, log);
    const app = await buildApi({ config, nc, store, bus: backbone.bus, readers: backbone.readers, metrics: createMetrics() }, log);
    const grants = startGrantService(nc, store, loadMasterKey(config), log.child({ service: 'secret-grants' }));
    const agentConn = await connectNats(backbone.nats.url, 'site-agent');
    using agentDirs = tempDir('bc-agents-');
    const responses: string[] = [];
    const http = async (method: 'GET' | 'PUT' | 'DELETE' | 'POST', url: string, payload?: unknown) => {
      const res = await app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${readAdminToken(config.dataDir)}` },
        ...(payload !== undefined ? { payload: payload as object } : {}),
      });
      responses.push(`${method} ${url} ${res.statusCode} ${JSON.stringify(res.headers)} ${res.body}`);
      return { status: res.statusCode, body: res.json<Record<string, unknown> & { code?: string }>() };
    };

    try {
      // Plaintexts: every string leaf of every value sent, including a rejected one.
      const bmcN1 = { username: unique('u1'), password: unique('p1') };
      const bmcN1Rotated = { username: unique('u1r'), password: unique('p1r') };
      const bmcN2 = { username: unique('u2'), password: unique('p2') };
      const token = unique('tok');
      const generic = { apiKey: unique('key'), nested: { note: unique('note') } };
      const rejected = { username: unique('rej') };
      const plaintexts = [bmcN1, bmcN1Rotated, bmcN2, generic, generic.nested, rejected]
        .flatMap((v) => Object.values(v).filter((x): x is string => typeof x === 'string'))
        .concat(token);

      for (const siteId of ['dc1', 'dc2']) await backbone.bus.execute({ name: 'site.create', payload: { siteId, name: siteId }, actor: 'test' });
      const enroll = (nodeId: string, siteId: string, ref: string, i: number) =>
        backbone.bus.execute({
          name: 'metal.enroll',
          payload: { nodeId, siteId, bmc: { address: `https://10.0.0.${i}`, credentialsRef: ref }, hardwareProfile: 'default', macs: [`52:54:00:00:00:0${i}`] },
          actor: 'test',
        });
      await enroll('n1', 'dc1', 'secret:bmc-n1', 1);
      await enroll('n2', 'dc2', 'secret:bmc-n2', 2);
      await enroll('n3', 'dc1', 'secret:cloud-token', 3);

      // PUT seals at the edge; the answer is metadata.
      const put1 = await http('PUT', '/v1/secrets/bmc-n1', { kind: 'bmc', value: bmcN1, description: 'rack 1 node 1' });
      expect(put1.status).toBe(201);
      expect(put1.body).toMatchObject({ secretId: 'bmc-n1', ref: 'secret:bmc-n1', kind: 'bmc', version: 1, duplicate: false });
      expect((await http('PUT', '/v1/secrets/bmc-n2', { kind: 'bmc', value: bmcN2 })).status).toBe(201);
      expect((await http('PUT', '/v1/secrets/cloud-token', { kind: 'provider-token', value: token })).status).toBe(201);
      expect((await http('PUT', '/v1/secrets/misc', { kind: 'generic', value: generic })).status).toBe(201);
      const bad = await http('PUT', '/v1/secrets/bmc-bad', { kind: 'bmc', value: rejected });
      expect([bad.status, bad.body.code]).toEqual([400, 'VALIDATION_FAILED']);
      // The raw command is not an HTTP route: operators cannot send secrets.put, sealed or not.
      const raw = await http('POST', '/v1/commands/secrets.put', { secretId: 'x1', kind: 'generic', version: 1, sealed: {} });
      expect([raw.status, raw.body.code]).toEqual([404, 'UNKNOWN_COMMAND']);

      // One master key, in a 0600 file under the data dir, shared by the API and the grant service.
      const masterKey = loadMasterKey(config);
      expect(statSync(join(backbone.dataDir, 'master.key')).mode & 0o777).toBe(0o600);
      expect(put1.body.keyId).toBe(masterKey.keyId);

      // Agents: dc1 and dc2 register over NATS; "site-dc1" also gets an impostor with another key.
      const agent = (siteId: string): GrantRequester => ({ agentId: siteAgentId(siteId), identity: loadOrCreateIdentity(join(agentDirs.path, siteId)) });
      const dc1 = agent('dc1');
      const dc2 = agent('dc2');
      for (const [siteId, a] of [
        ['dc1', dc1],
        ['dc2', dc2],
      ] as const) {
        await sendCommand(agentConn, 'agent.register', {
          agentId: a.agentId,
          role: 'site',
          siteId,
          publicKey: Buffer.from(a.identity.publicKeyRaw).toString('base64'),
        });
      }

      // The registered agent of the node's site gets the value, decrypts it, and caches it until the grant expires.
      const resolver = grantedCredentialResolver(agentConn, dc1);
      expect(await resolver.resolve('secret:bmc-n1', { nodeId: 'n1' })).toEqual(bmcN1);
      expect(await resolver.resolve('secret:bmc-n1', { nodeId: 'n1' })).toEqual(bmcN1);
      expect(await requestSecretGrant(agentConn, dc2, { ref: 'secret:bmc-n2', nodeId: 'n2' }).then((g) => JSON.parse(g.value.toString()))).toEqual(bmcN2);

      // Refusals, each with its stable code.
      const impostor: GrantRequester = { agentId: dc1.agentId, identity: loadOrCreateIdentity(join(agentDirs.path, 'impostor')) };
      const stranger: GrantRequester = { agentId: siteAgentId('dc9'), identity: loadOrCreateIdentity(join(agentDirs.path, 'dc9')) };
      expect(await codeOf(requestSecretGrant(agentConn, stranger, { ref: 'secret:bmc-n1', nodeId: 'n1' }))).toBe('GRANT_UNKNOWN_AGENT');
      expect(await codeOf(requestSecretGrant(agentConn, impostor, { ref: 'secret:bmc-n1', nodeId: 'n1' }))).toBe('GRANT_FORGED');
      expect(await codeOf(requestSecretGrant(agentConn, dc1, { ref: 'secret:bmc-n1', nodeId: 'n1' }, { now: () => Date.now() - 90_000 }))).toBe('GRANT_STALE');
      expect(await codeOf(requestSecretGrant(agentConn, dc1, { ref: 'secret:bmc-n1', nodeId: 'n1' }, { now: () => Date.now() + 90_000 }))).toBe('GRANT_STALE');
      expect(await codeOf(requestSecretGrant(agentConn, dc2, { ref: 'secret:bmc-n1', nodeId: 'n1' }))).toBe('GRANT_NOT_AUTHORISED');
      expect(await codeOf(requestSecretGrant(agentConn, dc1, { ref: 'secret:bmc-n2', nodeId: 'n1' }))).toBe('GRANT_NOT_AUTHORISED');
      expect(await codeOf(requestSecretGrant(agentConn, dc1, { ref: 'secret:cloud-token', nodeId: 'n3' }))).toBe('GRANT_NOT_AUTHORISED');
      const malformed = await agentConn.request(Subjects.secretGrant, '{"request":"e30=","signature":"","keyId":""}', { timeout: 5_000 });
      expect(malformed.headers?.get('Bc-Error-Code')).toBe('VALIDATION_FAILED');
      await expect(grantedCredentialResolver(agentConn, dc2).resolve('secret:bmc-n1', { nodeId: 'n1' })).rejects.toMatchObject({ code: 'CREDENTIALS_MISSING' });

      // A new version is granted from then on; a deleted secret is not granted at all.
      expect((await http('PUT', '/v1/secrets/bmc-n1', { kind: 'bmc', value: bmcN1Rotated })).body).toMatchObject({ version: 2 });
      expect(await grantedCredentialResolver(agentConn, dc1).resolve('secret:bmc-n1', { nodeId: 'n1' })).toEqual(bmcN1Rotated);
      expect((await http('DELETE', '/v1/secrets/bmc-n2')).status).toBe(200);
      expect(await codeOf(requestSecretGrant(agentConn, dc2, { ref: 'secret:bmc-n2', nodeId: 'n2' }))).toBe('NOT_FOUND');
      const deleted = await http('DELETE', '/v1/secrets/misc');

      // Metadata only, once the read model has everything.
      const list = await http('GET', `/v1/secrets?minSeq=${String(deleted.body.seq)}`);
      expect(list.body.items).toEqual([
        expect.objectContaining({ secretId: 'bmc-n1', ref: 'secret:bmc-n1', kind: 'bmc', version: 2, keyId: masterKey.keyId, description: 'rack 1 node 1' }),
        expect.objectContaining({ secretId: 'cloud-token', ref: 'secret:cloud-token', kind: 'provider-token', version: 1 }),
      ]);
      const one = await http('GET', '/v1/secrets/bmc-n1');
      expect(Object.keys(one.body).sort()).toEqual(['createdAt', 'description', 'keyId', 'kind', 'ref', 'secretId', 'updatedAt', 'version']);
      expect((await http('GET', '/v1/secrets/misc')).body.code).toBe('NOT_FOUND');
      expect(responses.join('\n')).not.toMatch(/ciphertext|"sealed"/);

      await sleep(200); // the spy connection's last deliveries
      const events = await streamMessages(nc, Streams.events.name);
      const readModels = sqliteDumps(join(backbone.dataDir, 'readmodels'));
      const places = [
        ...events.map((e) => ({ where: `BC_EVENTS #${e.seq} ${e.subject}`, text: e.text })),
        ...readModels.map((d) => ({ where: `rows of ${d.path}`, text: d.text })),
        ...filesUnder(backbone.dataDir).map((f) => ({ where: f.path, text: f.bytes })),
        ...filesUnder(backbone.nats.dir).map((f) => ({ where: f.path, text: f.bytes })),
        ...traffic.seen.map((m) => ({ where: `nats ${m.subject}`, text: m.text })),
        { where: 'logs', text: captured.join('') },
        { where: 'http responses', text: responses.join('\n') },
      ];
      // The scan sees what it should: sealed events, the read model's blobs, the grant traffic, the service's logs.
      expect(events.filter((e) => e.subject.startsWith('bc.evt.secrets.secret.')).length).toBe(7);
      expect(
        leaks(
          ['ciphertext'],
          readModels.map((d) => ({ where: d.path, text: d.text })),
        ).length,
      ).toBeGreaterThan(0);
      expect(traffic.seen.filter((m) => m.subject === Subjects.secretGrant).length).toBeGreaterThanOrEqual(12);
      expect(traffic.seen.some((m) => m.subject.startsWith('_INBOX.') && m.text.includes('"serverPublicKey"'))).toBe(true);
      expect(captured.join('')).toContain('secret granted');
      expect(leaks(['secret:bmc-n1'], places).length).toBeGreaterThan(5);
      // …and no plaintext anywhere.
      expect(plaintexts).toHaveLength(10);
      expect(leaks(plaintexts, places)).toEqual([]);
    } finally {
      await grants.stop();
      responder.unsubscribe();
      traffic.stop();
      await app.close();
      await agentConn.close();
      await spyConn.close();
    }
  });
});
