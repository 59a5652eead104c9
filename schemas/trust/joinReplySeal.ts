import { createCipheriv, createDecipheriv, createPublicKey, diffieHellman, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { ephemeralKeyPair } from '../ephemeralKey.ts';

/** A join answer encrypted to the joiner's one-request X25519 key (`JoinRequest.replyKey`). */
export const SealedJoinAnswer = z
  .object({
    serverPublicKey: z.string(),
    iv: z.string(),
    ciphertext: z.string(),
    tag: z.string(),
  })
  .strict();
export type SealedJoinAnswer = z.infer<typeof SealedJoinAnswer>;

const HKDF_INFO = 'bc.join.reply/v1';

function contentKey(privateKey: KeyObject, peerPublicKeyBase64: string, agentPublicKey: string): Buffer {
  const peer = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(peerPublicKeyBase64, 'base64').toString('base64url') }, format: 'jwk' });
  const shared = diffieHellman({ privateKey, publicKey: peer });
  return Buffer.from(hkdfSync('sha256', shared, Buffer.from(agentPublicKey, 'utf8'), HKDF_INFO, 32));
}

/**
 * Seals a join answer to `replyKey`, bound (salt and additional data) to the joining agent's Ed25519 key: every joiner
 * shares the join credential and so may read the join inboxes, and learns nothing from another joiner's answer.
 */
export function sealJoinAnswer(answer: unknown, replyKey: string, agentPublicKey: string): SealedJoinAnswer {
  const server = ephemeralKeyPair();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', contentKey(server.privateKey, replyKey, agentPublicKey), iv).setAAD(Buffer.from(agentPublicKey, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
  return {
    serverPublicKey: server.publicKeyBase64,
    iv: iv.toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

/** Opens a sealed join answer with the request's private key; throws when it was altered or meant for another joiner. */
export function openJoinAnswer(sealed: SealedJoinAnswer, replyPrivateKey: KeyObject, agentPublicKey: string): unknown {
  const decipher = createDecipheriv('aes-256-gcm', contentKey(replyPrivateKey, sealed.serverPublicKey, agentPublicKey), Buffer.from(sealed.iv, 'base64'))
    .setAAD(Buffer.from(agentPublicKey, 'utf8'))
    .setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return JSON.parse(Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8'));
}
