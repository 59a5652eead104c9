import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * The NATS user a connection authenticated as (its `.creds`: user JWT and seed), able to sign for it. nats-server 2.9
 * tells a receiver nothing of who sent a message inside an account, so a process that must be recognised (a command
 * sender, `commandSender.ts`) signs with the key the broker already knows it by, and shows the JWT that names it.
 */
export interface ConnectionIdentity {
  /** The user JWT, as issued: signed by the account's signing key, naming the user key (`sub`) and its `name`. */
  readonly jwt: string;
  readonly claims: UserClaims;
  /** Ed25519 over `data` with the user's seed (the seed never leaves this object). */
  sign(data: Uint8Array): Buffer;
}

/** The claims of a NATS user JWT this platform reads. */
export interface UserClaims {
  readonly sub: string;
  readonly iss: string;
  readonly name?: string;
  readonly exp?: number;
  readonly nats?: { readonly issuer_account?: string; readonly tags?: readonly string[] };
}

const identities = new WeakMap<NatsConnection, ConnectionIdentity>();

/** The identity in a `.creds` text (user JWT and seed); undefined for text that is no user credential. */
export function identityOfCreds(creds: string): ConnectionIdentity | undefined {
  const jwt = /-----BEGIN NATS USER JWT-----\s*([A-Za-z0-9_.-]+)\s*------END NATS USER JWT------/.exec(creds)?.[1];
  const seed = /-----BEGIN USER NKEY SEED-----\s*(SU[A-Z2-7]+)\s*------END USER NKEY SEED------/.exec(creds)?.[1];
  const claims = jwt && jwtClaims(jwt);
  if (!jwt || !seed || !claims) return undefined;
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, nkeyBytes(seed).subarray(2, 34)]), format: 'der', type: 'pkcs8' });
  return { jwt, claims, sign: (data) => sign(null, data, privateKey) };
}

/** Remembers what `nc` authenticated with (`connectNats` calls it). */
export function identifyConnection(nc: NatsConnection, identity: ConnectionIdentity): void {
  identities.set(nc, identity);
}

/** The identity `nc` authenticated with; undefined for a connection without credentials (`BC_NATS_AUTH=none`). */
export const identityOf = (nc: NatsConnection): ConnectionIdentity | undefined => identities.get(nc);

/** The claims of a JWT, unverified (the caller checks its signature with `jwtSignatureHolds`); undefined when malformed. */
export function jwtClaims(jwt: string): UserClaims | undefined {
  try {
    const claims = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Partial<UserClaims>;
    return typeof claims.sub === 'string' && typeof claims.iss === 'string' ? (claims as UserClaims) : undefined;
  } catch {
    return undefined;
  }
}

/** The Ed25519 public key an nkey (`U…`, `A…`) names. */
export function nkeyPublicKey(nkey: string): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, nkeyBytes(nkey).subarray(1, 33)]), format: 'der', type: 'spki' });
}

/** Whether a v2 NATS JWT (`ed25519-nkey`) is signed by the key `issuer` names. */
export function jwtSignatureHolds(jwt: string, issuer: string): boolean {
  const [header, payload, signature] = jwt.split('.');
  if (!header || !payload || !signature) return false;
  try {
    const alg = (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: string }).alg;
    if (alg !== 'ed25519-nkey') return false;
    return verifyEd25519(Buffer.from(`${header}.${payload}`), nkeyPublicKey(issuer), Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

/** Ed25519 with node's own crypto (nkeys' JavaScript implementation takes tens of milliseconds per signature). */
export const verifyEd25519 = (data: Uint8Array, key: KeyObject, signature: Uint8Array): boolean =>
  signature.length === 64 && verify(null, data, key, signature);

/** PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410): this prefix, then the seed. */
export const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The bytes of an nkey's base32 text: prefix byte(s), the 32 key bytes, a CRC-16 (nkeys' encoding). */
function nkeyBytes(text: string): Buffer {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const c of text) {
    const digit = BASE32.indexOf(c);
    if (digit < 0) throw new Error('not an nkey');
    value = ((value << 5) | digit) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}
