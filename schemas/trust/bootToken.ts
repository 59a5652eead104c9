import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { Problem } from '../api.ts';
import { ResourceId } from '../ids.ts';
import { keyIdOf } from './agentIds.ts';
import { AgentId } from './agentIds.ts';
import { RamdiskBoot } from './ramdiskBoot.ts';

/**
 * A site agent asks for the single-use ramdisk join token of one machine's boot (on `bc.trust.bootToken`) when the
 * machine fetches its iPXE script with the boot's ticket. Signed with the site agent's registered key, like a secret
 * grant request. `boot` names the power step attempt whose reset minted the ticket; `refetch` reports a second fetch
 * of a spent ticket (no token is minted: the boot is contested).
 */
export const BootTokenRequest = z
  .object({ agentId: AgentId, nodeId: ResourceId, issuedAt: z.iso.datetime(), boot: RamdiskBoot, refetch: z.boolean().optional() })
  .strict();
export type BootTokenRequest = z.infer<typeof BootTokenRequest>;

export const SignedBootTokenRequest = z.object({ request: z.base64(), signature: z.base64(), keyId: z.string() }).strict();
export type SignedBootTokenRequest = z.infer<typeof SignedBootTokenRequest>;

/** Requests issued longer ago (or this far ahead) are refused: a replay cannot mint tokens later. */
export const BOOT_TOKEN_REQUEST_MAX_AGE_MS = 60_000;

/** The token goes only to the requesting site agent's inbox, which puts it on the machine's kernel line. */
export const BootTokenReply = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), token: z.string(), expiresAt: z.string() }),
  z.object({ ok: z.literal(false), error: Problem }),
]);
export type BootTokenReply = z.infer<typeof BootTokenReply>;

export function signBootTokenRequest(request: BootTokenRequest, signer: { privateKey: KeyObject; publicKeyRaw: Uint8Array }): SignedBootTokenRequest {
  const bytes = Buffer.from(JSON.stringify(request), 'utf8');
  return {
    request: bytes.toString('base64'),
    signature: sign(null, bytes, signer.privateKey).toString('base64'),
    keyId: keyIdOf(Buffer.from(signer.publicKeyRaw).toString('base64')),
  };
}

/** True when `signed` is signed by the Ed25519 key (base64 raw) registered for the agent it names. */
export function bootTokenRequestSignedBy(signed: SignedBootTokenRequest, publicKeyBase64: string): boolean {
  try {
    if (signed.keyId !== keyIdOf(publicKeyBase64)) return false;
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyBase64, 'base64').toString('base64url') }, format: 'jwk' });
    return verify(null, Buffer.from(signed.request, 'base64'), key, Buffer.from(signed.signature, 'base64'));
  } catch {
    return false;
  }
}
