import { NKeysError, NKeysErrorCode, type KeyPair } from '@nats-io/nkeys';
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410): this prefix, then the seed. */
const ed25519Pkcs8Prefix = Buffer.from('302e020100300506032b657004220420', 'hex');

/** What `@nats-io/nkeys`' KP holds beside the `KeyPair` interface: the raw 32-byte Ed25519 seed. */
interface SeededKeyPair extends KeyPair {
  getRawSeed(): Uint8Array;
}

/**
 * The same nkey, signing through OpenSSL. nkeys' own pair signs in pure JavaScript (tweetnacl) and derives the key
 * from the seed on every call: `getPublicKey` and `sign` cost three scalar multiplications per user JWT, which made
 * JWT issue the largest cost of a join (about a quarter of the control plane's CPU in a fleet run). Here the private
 * key object and the public key are made once; the signatures are the same bytes (Ed25519 is deterministic).
 * Everything but signing, verifying and the public key is the wrapped pair's.
 */
export function nativeSigningKey(pair: KeyPair): KeyPair {
  const raw = (pair as SeededKeyPair).getRawSeed();
  const der = Buffer.concat([ed25519Pkcs8Prefix, raw]);
  const privateKey: KeyObject = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  // The key now lives in the KeyObject: no stray copy of the seed stays on the heap.
  der.fill(0);
  raw.fill(0);
  const publicKey = createPublicKey(privateKey);
  const publicNkey = pair.getPublicKey();
  // Every JWT encode asks for it (only to check the signer holds a seed): derived once, handed out as copies.
  let privateNkey: Uint8Array | undefined;
  let cleared = false;
  const held = (): void => {
    if (cleared) throw new NKeysError(NKeysErrorCode.ClearedPair);
  };
  return {
    getPublicKey: () => publicNkey,
    getPrivateKey: () => {
      held();
      return (privateNkey ??= pair.getPrivateKey()).slice();
    },
    getSeed: () => pair.getSeed(),
    sign: (input) => {
      held();
      return new Uint8Array(sign(null, input, privateKey));
    },
    verify: (input, signature) => verify(null, input, publicKey, signature),
    clear: () => {
      cleared = true;
      privateNkey?.fill(0);
      pair.clear();
    },
    seal: (input, recipient, nonce) => pair.seal(input, recipient, nonce),
    open: (message, sender) => pair.open(message, sender),
  };
}
