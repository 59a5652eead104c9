import { createCipheriv, createDecipheriv, createHash, createPublicKey, diffieHellman, hkdfSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { keyIdOf } from '../agent/agentResultCodec.ts';
import { ephemeralKeyPair } from '../ephemeralKey.ts';
import type { SecretGrant, SecretGrantRequest, SignedSecretGrantRequest } from './grant.ts';

const HKDF_INFO = 'bc.secrets.grant/v1';

const x25519PublicKey = (base64: string) =>
  createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(base64, 'base64').toString('base64url') }, format: 'jwk' });

/** Serialises and signs a grant request with the agent's Ed25519 identity. */
export function signGrantRequest(request: SecretGrantRequest, signer: { privateKey: KeyObject; publicKeyRaw: Uint8Array }): SignedSecretGrantRequest {
  const bytes = Buffer.from(JSON.stringify(request), 'utf8');
  return { request: bytes.toString('base64'), signature: sign(null, bytes, signer.privateKey).toString('base64'), keyId: keyIdOf(signer.publicKeyRaw) };
}

/** True when `signed` carries a valid signature by the registered Ed25519 key (base64 raw) it names. */
export function grantRequestSignedBy(signed: SignedSecretGrantRequest, publicKeyBase64: string): boolean {
  try {
    const raw = Buffer.from(publicKeyBase64, 'base64');
    if (signed.keyId !== keyIdOf(raw)) return false;
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
    return verify(null, Buffer.from(signed.request, 'base64'), key, Buffer.from(signed.signature, 'base64'));
  } catch {
    return false;
  }
}

const grantAad = (g: { ref: string; nodeId: string; expiresAt: string }, agentId: string) => `${g.ref}|${g.nodeId}|${agentId}|${g.expiresAt}`;

function contentKey(privateKey: KeyObject, peerPublicKeyBase64: string, requestBytes: Buffer): Buffer {
  const shared = diffieHellman({ privateKey, publicKey: x25519PublicKey(peerPublicKeyBase64) });
  const salt = createHash('sha256').update(requestBytes).digest();
  return Buffer.from(hkdfSync('sha256', shared, salt, HKDF_INFO, 32));
}

/** Encrypts `plaintext` to the request's ephemeral key, under a fresh server key pair. */
export function encryptGrant(plaintext: Buffer, request: SecretGrantRequest, requestBytes: Buffer, expiresAt: string): SecretGrant {
  const server = ephemeralKeyPair();
  const key = contentKey(server.privateKey, request.ephemeralPublicKey, requestBytes);
  const iv = randomBytes(12);
  const header = { ref: request.ref, nodeId: request.nodeId, expiresAt };
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(grantAad(header, request.agentId)));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return {
    ...header,
    serverPublicKey: server.publicKeyBase64,
    iv: iv.toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

/** Decrypts a grant with the request's ephemeral private key; throws when it was altered or meant for another request. */
export function decryptGrant(grant: SecretGrant, ephemeralPrivateKey: KeyObject, signed: SignedSecretGrantRequest, agentId: string): Buffer {
  const key = contentKey(ephemeralPrivateKey, grant.serverPublicKey, Buffer.from(signed.request, 'base64'));
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(grant.iv, 'base64'))
    .setAAD(Buffer.from(grantAad(grant, agentId)))
    .setAuthTag(Buffer.from(grant.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(grant.ciphertext, 'base64')), decipher.final()]);
}
