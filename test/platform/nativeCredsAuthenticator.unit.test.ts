import { credsAuthenticator } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { nativeCredsAuthenticator } from '../../services/platform/nats/brokerConnection.ts';
import { createAgentUserKey, credsText } from '../../services/platform/nats/agentCredentials.ts';
import { loadOrCreateBrokerMaterial } from '../../services/trust/broker/brokerMaterial.ts';
import { issueServiceCredentials, issueUserJwt } from '../../services/trust/broker/userCredentials.ts';

const dir = mkdtempSync(join(tmpdir(), 'bc-native-auth-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('nativeCredsAuthenticator', () => {
  test("answers a nonce with the same JWT, user key and signature as nats.js' credsAuthenticator", async () => {
    const material = await loadOrCreateBrokerMaterial(join(dir, 'broker'));
    const agentKey = createAgentUserKey();
    const agentJwt = await issueUserJwt(material, agentKey.publicKey, { role: 'node', agentId: 'ramdisk-n1-abcdefgh', siteId: 'dc1', nodeId: 'n1' });
    const credentials = [(await issueServiceCredentials(material, 'native-auth-test')).creds, credsText(agentJwt.jwt, agentKey.seed)];
    for (const creds of credentials) {
      const ours = nativeCredsAuthenticator(creds);
      const theirs = credsAuthenticator(new TextEncoder().encode(creds));
      for (const nonce of ['Ab-9xZ_2kq0yLwH8', 'nonce with spaces', undefined]) expect(ours(nonce)).toEqual(theirs(nonce));
    }
  });

  test("text that is no user credential is left to nats.js' authenticator, which refuses it", () => {
    expect(() => nativeCredsAuthenticator('not a creds file')('nonce')).toThrow('unable to parse credentials');
  });
});
