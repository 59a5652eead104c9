import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { signatureHolds } from '../../schemas/agent/agentResultCodec.ts';
import { provenBefore } from '../../schemas/agent/provenSignatures.ts';

const keyPair = () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicKeyBase64: Buffer.from(raw).toString('base64') };
};

describe('proven signatures', () => {
  test('a signature that held is answered again from memory, for exactly the same message and key only', () => {
    const signer = keyPair();
    const other = keyPair();
    const message = Buffer.from('result bytes of cmd-1');
    const signature = sign(null, message, signer.privateKey);
    expect(provenBefore(message, signature, signer.publicKeyBase64)).toBe(false);
    expect(signatureHolds(message, signature, signer.publicKeyBase64)).toBe(true);
    expect(provenBefore(message, signature, signer.publicKeyBase64)).toBe(true);
    expect(signatureHolds(Buffer.from(message), new Uint8Array(signature), signer.publicKeyBase64)).toBe(true);

    const altered = Buffer.from(message);
    altered.writeUInt8(altered.readUInt8(0) ^ 1, 0);
    expect(provenBefore(altered, signature, signer.publicKeyBase64)).toBe(false);
    expect(signatureHolds(altered, signature, signer.publicKeyBase64)).toBe(false);
    expect(provenBefore(message, signature, other.publicKeyBase64)).toBe(false);
    expect(signatureHolds(message, signature, other.publicKeyBase64)).toBe(false);
  });

  test('a signature that failed is never remembered', () => {
    const signer = keyPair();
    const message = Buffer.from('forged');
    const forged = Buffer.alloc(64, 7);
    expect(signatureHolds(message, forged, signer.publicKeyBase64)).toBe(false);
    expect(provenBefore(message, forged, signer.publicKeyBase64)).toBe(false);
  });
});
