import { encodeUser, fmtCreds, parseCreds, type User } from '@nats-io/jwt';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createUser, fromPublic } from '@nats-io/nkeys';
import type { BrokerMaterial } from './brokerMaterial.ts';
import { BrokerTrustError } from './errors.ts';
import { inboxPrefixFor, maxPayloadFor, permissionsFor, type RoleGrant } from './permissions.ts';

/** A user JWT the broker accepts, and when it stops accepting it. */
export interface IssuedUser {
  readonly publicKey: string;
  readonly jwt: string;
  /** Seconds since the epoch; 0 = never (only the public join credential). */
  readonly expiresAt: number;
  /** Pass as the client's `inboxPrefix` option: the user may subscribe to no other inbox. */
  readonly inboxPrefix: string;
}

/** A user JWT plus its seed in the `.creds` layout nats.js' `credsAuthenticator` and the nats CLI read. */
export interface IssuedCredentials extends IssuedUser {
  /** Contains the seed: write it 0600, never log it. */
  readonly creds: string;
}

const defaultTtlSeconds = 24 * 3600;

/**
 * Signs a user JWT for a key the caller does not hold: an agent generates its nkey (`createAgentUserKey`) and sends
 * only the public key; the seed never leaves the agent, which joins JWT and seed with `credsText`.
 */
export async function issueUserJwt(
  material: BrokerMaterial,
  userPublicKey: string,
  grant: RoleGrant,
  options: { name?: string; ttlSeconds?: number } = {},
): Promise<IssuedUser> {
  assertUserKey(userPublicKey);
  if (material.revocations()[userPublicKey] !== undefined) throw new BrokerTrustError('USER_REVOKED', `user key ${userPublicKey} is revoked`);
  const ttl = options.ttlSeconds ?? defaultTtlSeconds;
  const expiresAt = Math.floor(Date.now() / 1000) + ttl;
  const payload = maxPayloadFor(grant);
  const claims: Partial<User> = { ...permissionsFor(grant, userPublicKey), ...(payload ? { payload } : {}), tags: tagsOf(grant) };
  const jwt = await encodeUser(options.name ?? nameOf(grant), userPublicKey, material.appAccount.publicKey, claims, {
    signer: material.appSigningKey,
    exp: expiresAt,
  });
  return { publicKey: userPublicKey, jwt, expiresAt, inboxPrefix: inboxPrefixFor(grant) };
}

/** Credentials for a control-plane process: the seed is generated here, since the control plane issues it to itself. */
export async function issueServiceCredentials(
  material: BrokerMaterial,
  serviceName: string,
  options: { ttlSeconds?: number } = {},
): Promise<IssuedCredentials> {
  const key = createUser();
  const user = await issueUserJwt(material, key.getPublicKey(), { role: 'control-plane' }, { name: serviceName, ...options });
  return { ...user, creds: new TextDecoder().decode(fmtCreds(user.jwt, key)) };
}

/** An inspector credential lives an hour unless asked otherwise: it is handed to a person, and reissued at will. */
export const INSPECTOR_TTL_SECONDS = 3600;

/**
 * A read-only credential for a person watching the fleet (`nats sub 'bc.>'`, `better-compute tail`): subscribe to
 * `bc.>` (join requests excepted), publish nothing, expire soon (`INSPECTOR_TTL_SECONDS` by default).
 */
export async function issueInspectorCredentials(material: BrokerMaterial, options: { ttlSeconds?: number } = {}): Promise<IssuedCredentials> {
  const key = createUser();
  const user = await issueUserJwt(material, key.getPublicKey(), { role: 'inspector' }, { ttlSeconds: options.ttlSeconds ?? INSPECTOR_TTL_SECONDS });
  return { ...user, creds: new TextDecoder().decode(fmtCreds(user.jwt, key)) };
}

/**
 * The well-known join credential: a bearer JWT that never expires and may only publish `bc.join.*` and read
 * `_INBOX_join.>`. Operator mode has no `no_auth_user` on 2.9, so "unauthenticated" is this public credential;
 * being bearer, it needs no signature, and the seed in its `.creds` is deliberately public. Created once as
 * `<broker dir>/join.creds` (mode 0644: it is meant to be handed out) and loaded from there afterwards.
 */
export async function issueJoinCredentials(material: BrokerMaterial): Promise<IssuedCredentials> {
  const path = join(material.dir, 'join.creds');
  if (existsSync(path)) {
    const creds = readFileSync(path, 'utf8');
    const parsed = await parseCreds(new TextEncoder().encode(creds));
    if (parsed.uc.nats.issuer_account === material.appAccount.publicKey) {
      return { publicKey: parsed.uc.sub, jwt: parsed.jwt, expiresAt: 0, inboxPrefix: inboxPrefixFor({ role: 'join' }), creds };
    }
  }
  const key = createUser();
  const grant = { role: 'join' } as const;
  const jwt = await encodeUser(
    'join',
    key,
    material.appAccount.publicKey,
    { ...permissionsFor(grant), bearer_token: true, tags: tagsOf(grant) },
    {
      signer: material.appSigningKey,
    },
  );
  const creds = new TextDecoder().decode(fmtCreds(jwt, key));
  writeFileSync(path, creds, { mode: 0o644 });
  return { publicKey: key.getPublicKey(), jwt, expiresAt: 0, inboxPrefix: inboxPrefixFor(grant), creds };
}

/** A system-account user, for pushing account JWTs (`revocation.ts`); nothing else should connect to `SYS`. */
export async function issueSystemCredentials(material: BrokerMaterial, options: { ttlSeconds?: number } = {}): Promise<IssuedCredentials> {
  const key = createUser();
  const expiresAt = Math.floor(Date.now() / 1000) + (options.ttlSeconds ?? defaultTtlSeconds);
  const jwt = await encodeUser('system', key, material.systemAccountKey, {}, { exp: expiresAt });
  return { publicKey: key.getPublicKey(), jwt, expiresAt, inboxPrefix: '_INBOX', creds: new TextDecoder().decode(fmtCreds(jwt, key)) };
}

function assertUserKey(publicKey: string): void {
  try {
    fromPublic(publicKey);
  } catch (err) {
    throw new BrokerTrustError('INVALID_PUBLIC_KEY', 'not an nkey public key', { cause: err });
  }
  if (!publicKey.startsWith('U')) throw new BrokerTrustError('INVALID_PUBLIC_KEY', 'not a user nkey (U…)');
}

function nameOf(grant: RoleGrant): string {
  return grant.role === 'site' || grant.role === 'node' ? grant.agentId : grant.role;
}

function tagsOf(grant: RoleGrant): string[] {
  switch (grant.role) {
    case 'site':
      return ['role:site', `site:${grant.siteId}`];
    case 'node':
      return ['role:node', `site:${grant.siteId}`, `node:${grant.nodeId}`];
    default:
      return [`role:${grant.role}`];
  }
}
