import { decode, encodeAccount, encodeOperator, type Account, type KeyPair, type OperatorLimits } from '@nats-io/jwt';
import { createAccount, createOperator, fromSeed } from '@nats-io/nkeys';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BrokerTrustError } from './errors.ts';
import { nativeSigningKey } from './nativeSigningKey.ts';

/** JetStream limits of the application account; -1 is unlimited (the default for every field). */
export interface AppAccountJetStreamLimits {
  memStorage: number;
  diskStorage: number;
  streams: number;
  consumers: number;
}

export interface BrokerMaterialOptions {
  /** Account name of the application account in its JWT (default `BC`). */
  appAccountName?: string;
  /**
   * The application account's JetStream limits (unlimited where unset). Given, they replace the stored ones (the
   * account is re-signed when they differ); absent, the stored account is left as it is.
   */
  jetStream?: Partial<AppAccountJetStreamLimits>;
}

/** The public half of an account: what a server config or a claims push needs. */
export interface AccountIdentity {
  readonly name: string;
  readonly publicKey: string;
  readonly jwt: string;
}

const unlimitedNats = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };

/**
 * The broker's trust chain under one directory: an operator (with a signing key), the system account `SYS` and the
 * application account `BC` (JetStream on, with a signing key that issues every user). Seeds live only in files of
 * mode 0600 and in private fields here; `toJSON` and `inspect` show public keys only, so the object is safe to log.
 * Nothing else in the platform holds a seed of this chain.
 */
export class BrokerMaterial {
  readonly #operatorSigning: KeyPair;
  readonly #appSigning: KeyPair;
  readonly #systemAccount: KeyPair;
  #app: AccountIdentity;
  /** The revocations of `#app`'s JWT, decoded once per JWT: decoding verifies its signature, and every issue asks. */
  #revocations: { jwt: string; revoked: Readonly<Record<string, number>> } | undefined;

  constructor(
    readonly dir: string,
    readonly operatorPublicKey: string,
    readonly operatorJwt: string,
    readonly systemAccount: AccountIdentity,
    app: AccountIdentity,
    keys: { operatorSigning: KeyPair; appSigning: KeyPair; systemAccount: KeyPair },
  ) {
    this.#app = app;
    this.#operatorSigning = keys.operatorSigning;
    this.#appSigning = nativeSigningKey(keys.appSigning);
    this.#systemAccount = keys.systemAccount;
  }

  /** The application account as last signed (its JWT carries the current revocations). */
  get appAccount(): AccountIdentity {
    return this.#app;
  }

  /** Revoked user keys, each with the second up to which JWTs issued for it are refused. */
  revocations(): Readonly<Record<string, number>> {
    const jwt = this.#app.jwt;
    if (this.#revocations?.jwt !== jwt) this.#revocations = { jwt, revoked: Object.freeze({ ...decode<Account>(jwt).nats.revocations }) };
    return this.#revocations.revoked;
  }

  /** The key user JWTs of the application account are signed with (users carry `issuer_account`). */
  get appSigningKey(): KeyPair {
    return this.#appSigning;
  }

  /** System-account users are signed by the account key itself: it is only used for claims pushes. */
  get systemAccountKey(): KeyPair {
    return this.#systemAccount;
  }

  /**
   * Re-signs the application account with `change` applied to its claims, stores the JWT (atomically, 0600) and
   * returns it. The caller pushes it to running servers; a restart picks it up through `resolver_preload`.
   */
  async reissueAppAccount(change: (claims: Partial<Account>) => Partial<Account>): Promise<AccountIdentity> {
    const current = decode<Account>(this.#app.jwt);
    const next = change(structuredClone(current.nats));
    const jwt = await encodeAccount(this.#app.name, this.#app.publicKey, stripVersion(next), { signer: this.#operatorSigning });
    writeSecretFile(join(this.dir, files.appJwt), jwt);
    this.#app = { ...this.#app, jwt };
    return this.#app;
  }

  toJSON(): Record<string, unknown> {
    return { dir: this.dir, operator: this.operatorPublicKey, systemAccount: this.systemAccount.publicKey, appAccount: this.#app.publicKey };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): Record<string, unknown> {
    return this.toJSON();
  }
}

const files = {
  operator: 'operator.nk',
  operatorSigning: 'operator-signing.nk',
  operatorJwt: 'operator.jwt',
  system: 'account-SYS.nk',
  systemJwt: 'account-SYS.jwt',
  app: 'account-BC.nk',
  appSigning: 'account-BC-signing.nk',
  appJwt: 'account-BC.jwt',
} as const;

/**
 * Creates the trust chain under `dir` on first use and loads the same one afterwards (idempotent; concurrent first
 * calls agree because each key file is created exclusively). The application account JWT is re-signed only when
 * JetStream limits are requested and differ from the stored ones, keeping its revocations.
 */
export async function loadOrCreateBrokerMaterial(dir: string, options: BrokerMaterialOptions = {}): Promise<BrokerMaterial> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const operator = keyFile(dir, files.operator, createOperator);
  const operatorSigning = keyFile(dir, files.operatorSigning, createOperator);
  const system = keyFile(dir, files.system, createAccount);
  const app = keyFile(dir, files.app, createAccount);
  const appSigning = keyFile(dir, files.appSigning, createAccount);
  const appName = options.appAccountName ?? 'BC';

  const operatorJwt = await jwtFile(dir, files.operatorJwt, operator.getPublicKey(), () =>
    encodeOperator('better-compute', operator, {
      signing_keys: [operatorSigning.getPublicKey()],
      system_account: system.getPublicKey(),
    }),
  );
  const systemJwt = await jwtFile(dir, files.systemJwt, system.getPublicKey(), () =>
    encodeAccount('SYS', system, { limits: { ...unlimitedNats } }, { signer: operatorSigning }),
  );
  const wanted = jetStreamLimits(options.jetStream);
  let appJwt = await jwtFile(dir, files.appJwt, app.getPublicKey(), () =>
    encodeAccount(appName, app, { limits: { ...unlimitedNats, ...wanted }, signing_keys: [appSigning.getPublicKey()] }, { signer: operatorSigning }),
  );

  const material = new BrokerMaterial(
    dir,
    operator.getPublicKey(),
    operatorJwt,
    { name: 'SYS', publicKey: system.getPublicKey(), jwt: systemJwt },
    { name: appName, publicKey: app.getPublicKey(), jwt: appJwt },
    { operatorSigning, appSigning, systemAccount: system },
  );
  const stored = decode<Account>(appJwt).nats.limits ?? {};
  const drifted = options.jetStream !== undefined && Object.entries(wanted).some(([key, value]) => (stored as Record<string, unknown>)[key] !== value);
  if (drifted) appJwt = (await material.reissueAppAccount((claims) => ({ ...claims, limits: { ...claims.limits, ...wanted } }))).jwt;
  return material;
}

function jetStreamLimits(limits: Partial<AppAccountJetStreamLimits> = {}): OperatorLimits {
  return {
    mem_storage: limits.memStorage ?? -1,
    disk_storage: limits.diskStorage ?? -1,
    streams: limits.streams ?? -1,
    consumer: limits.consumers ?? -1,
  };
}

/** `encodeAccount` sets `type` and `version` itself; carrying the decoded ones over would duplicate them. */
function stripVersion(claims: Partial<Account>): Partial<Account> {
  const { type: _type, version: _version, ...rest } = claims;
  return rest;
}

function keyFile(dir: string, name: string, create: () => KeyPair): KeyPair {
  const path = join(dir, name);
  const fresh = create();
  try {
    writeFileSync(path, fresh.getSeed(), { flag: 'wx', mode: 0o600 });
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  try {
    return fromSeed(new Uint8Array(readFileSync(path)));
  } catch (err) {
    // The cause would quote the seed bytes' parse failure; the path is enough to act on.
    throw new BrokerTrustError('MATERIAL_CORRUPT', `${path} does not hold an nkey seed`, { cause: (err as Error).name });
  }
}

async function jwtFile(dir: string, name: string, subject: string, create: () => Promise<string>): Promise<string> {
  const path = join(dir, name);
  let existing: string | undefined;
  try {
    existing = readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (existing !== undefined) {
    let sub: string | undefined;
    try {
      sub = decode(existing).sub;
    } catch {
      sub = undefined;
    }
    if (sub !== subject) throw new BrokerTrustError('MATERIAL_CORRUPT', `${path} is not a JWT for ${subject}`);
    return existing;
  }
  const jwt = await create();
  try {
    writeFileSync(path, jwt, { flag: 'wx', mode: 0o600 });
    return jwt;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readFileSync(path, 'utf8').trim();
  }
}

/** Replaces a file atomically (write a sibling, rename), so a crash never leaves half a JWT behind. */
function writeSecretFile(path: string, content: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  renameSync(tmp, path);
}
