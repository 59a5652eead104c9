import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { requestBootJoinToken } from '../../daemon/site/bootJoinTokens.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { startBootTokenService } from '../../services/trust/join/bootTokenService.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';

const keyPair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicKeyRaw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { privateKey, publicKeyRaw, publicKeyBase64: publicKeyRaw.toString('base64') };
};
const ticket = (nodeId: string) => ({ nodeId, ticketId: 'T'.repeat(43), boot: { workflowId: `wf-${nodeId}`, stepIndex: 1, attempt: 1 } });
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'minted',
    (err: unknown) => (err instanceof PlatformError ? err.code : String(err)),
  );

describe('boot token service', () => {
  it('mints nothing for unknown or forging agents, machines of another site, or machines no workflow is booting', { timeout: 30_000 }, async () => {
    await using env = await startBackbone({ projectors: false });
    const { nc, store, bus, log } = env;
    const service = startBootTokenService(nc, store, log);
    try {
      const send = (name: string, payload: unknown, commandId: string) => bus.execute({ name, payload, commandId, actor: 'test' });
      for (const siteId of ['dc1', 'dc2']) await send('site.create', { siteId, name: siteId }, `site-create-${siteId}`);
      await send('metal.enroll', enrollPayload('n1', 'dc1'), 'enroll-n1-0001');
      await send('metal.enroll', enrollPayload('m1', 'dc2'), 'enroll-m1-0001');
      const site = keyPair();
      await send('agent.register', { agentId: 'site-dc1', role: 'site', siteId: 'dc1', publicKey: site.publicKeyBase64 }, 'register-site-dc1');

      expect(await codeOf(requestBootJoinToken(nc, { agentId: 'site-dc9', identity: site }, ticket('n1')))).toBe('BOOT_TOKEN_UNKNOWN_AGENT');
      expect(await codeOf(requestBootJoinToken(nc, { agentId: 'site-dc1', identity: keyPair() }, ticket('n1')))).toBe('BOOT_TOKEN_FORGED');
      expect(await codeOf(requestBootJoinToken(nc, { agentId: 'site-dc1', identity: site }, ticket('m1')))).toBe('BOOT_TOKEN_NOT_AUTHORISED');
      expect(await codeOf(requestBootJoinToken(nc, { agentId: 'site-dc1', identity: site }, ticket('n1')))).toBe('BOOT_TOKEN_NOT_DUE');
    } finally {
      await service.stop();
    }
  });
});
