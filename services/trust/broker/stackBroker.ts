import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadOrCreateBrokerMaterial, type BrokerMaterial } from './brokerMaterial.ts';
import { writeServerConfig } from './serverConfig.ts';
import { issueInspectorCredentials, issueJoinCredentials, issueServiceCredentials } from './userCredentials.ts';

/** Control-plane and plugin credentials: issued afresh at every `npm start` (or `plugin creds`), valid a year so a long-running stack is not cut off by its own credentials. */
export const SERVICE_TTL_SECONDS = 365 * 24 * 3600;

/** The broker of one `npm start`: its trust chain, the server config naming it, and credentials for its processes. */
export interface StackBroker {
  readonly material: BrokerMaterial;
  /** The embedded server's config; undefined for an external server, which runs from the config its operator made. */
  readonly configFile: string | undefined;
  /** The public join credential agents join with (`join.creds`, mode 0644). */
  readonly joinCredsFile: string;
  /** Issues control-plane credentials for one supervised process and writes them (0600); returns the path. */
  writeServiceCredentials(serviceName: string): Promise<string>;
  /** The `.creds` text of a control-plane credential for the stack process itself. */
  serviceCreds(serviceName: string): Promise<string>;
  /** Issues a read-only inspector credential (what `npm start` prints for `nats sub`) and writes it (0600). */
  writeInspectorCredentials(): Promise<{ path: string; expiresAt: number }>;
}

/**
 * Prepares operator mode under `brokerDir`: creates or loads the trust chain (with the account's JetStream storage
 * limit, `BC_JETSTREAM_MAX_BYTES`, for the embedded server), renders the embedded nats-server's config when `storeDir` names its store (store and resolver under `storeDir`/`brokerDir`) and writes the public join
 * credential. Existing JetStream data of an anonymous-mode store lives in another account and is not carried over.
 */
export async function prepareStackBroker(options: { brokerDir: string; storeDir?: string; jetStreamMaxBytes?: number | undefined }): Promise<StackBroker> {
  // The embedded server starts from this material's account JWT, so its JetStream limit is the configured one; an
  // external server runs from the config `broker init` rendered and keeps the limit it was given there.
  const material = await loadOrCreateBrokerMaterial(
    options.brokerDir,
    options.storeDir === undefined ? {} : { jetStream: { diskStorage: options.jetStreamMaxBytes ?? -1 } },
  );
  const configFile =
    options.storeDir === undefined
      ? undefined
      : writeServerConfig(join(options.brokerDir, 'nats.conf'), material, { storeDir: options.storeDir, resolverDir: join(options.brokerDir, 'resolver') });
  await issueJoinCredentials(material);
  const credsDir = join(options.brokerDir, 'creds');
  mkdirSync(credsDir, { recursive: true, mode: 0o700 });
  const serviceCreds = async (serviceName: string) => (await issueServiceCredentials(material, serviceName, { ttlSeconds: SERVICE_TTL_SECONDS })).creds;
  return {
    material,
    configFile,
    joinCredsFile: join(options.brokerDir, 'join.creds'),
    serviceCreds,
    async writeServiceCredentials(serviceName) {
      const path = join(credsDir, `${serviceName.replace(/[^A-Za-z0-9_-]/g, '_')}.creds`);
      writeFileSync(path, await serviceCreds(serviceName), { mode: 0o600 });
      return path;
    },
    async writeInspectorCredentials() {
      const path = join(credsDir, 'inspector.creds');
      const issued = await issueInspectorCredentials(material);
      writeFileSync(path, issued.creds, { mode: 0o600 });
      return { path, expiresAt: issued.expiresAt };
    },
  };
}
