import type { NatsConnection } from '@nats-io/transport-node';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Inboxes } from '../../schemas/subjects.ts';
import { brokerDirOf, natsUrlOf, type Config } from '../platform/config.ts';
import { connectNats, type NatsCredentials } from '../platform/nats/connect.ts';
import { probeAnonymousAccess } from '../platform/nats/natsAccess.ts';
import { NatsAccessError } from '../platform/nats/natsAccessError.ts';
import { loadOrCreateBrokerMaterial } from '../trust/broker/brokerMaterial.ts';
import { issueServiceCredentials } from '../trust/broker/userCredentials.ts';
import { SERVICE_TTL_SECONDS } from '../trust/broker/stackBroker.ts';

/** True when `dir` holds a trust chain (the operator and the application account), without creating one. */
export function brokerMaterialExists(dir: string): boolean {
  return ['operator.jwt', 'account-BC.jwt', 'account-BC-signing.nk'].every((file) => existsSync(join(dir, file)));
}

/**
 * The credentials a control-plane process connects with. `natsAuth: none`: none. `operator`: the `.creds` file in
 * `natsCredsFile` (what `npm start` hands each process group), else a control-plane credential issued now from the
 * trust chain in the broker directory. A process never creates a trust chain: the server would not know it.
 */
export async function controlPlaneCredentials(config: Config, serviceName: string): Promise<NatsCredentials | undefined> {
  if (config.natsAuth === 'none') return undefined;
  if (config.natsCredsFile) return { creds: readFileSync(config.natsCredsFile, 'utf8'), inboxPrefix: Inboxes.controlPlane };
  const dir = brokerDirOf(config);
  if (!brokerMaterialExists(dir)) {
    throw new NatsAccessError(
      'BROKER_MATERIAL_MISSING',
      `BC_NATS_AUTH=operator needs BC_NATS_CREDS or the broker trust chain in ${dir} (better-compute broker init)`,
    );
  }
  const issued = await issueServiceCredentials(await loadOrCreateBrokerMaterial(dir), serviceName, { ttlSeconds: SERVICE_TTL_SECONDS });
  return { creds: issued.creds, inboxPrefix: issued.inboxPrefix };
}

/**
 * Refuses to use a server that does not enforce what `natsAuth` promises: under `operator`, a server that lets a
 * connection without credentials in is an anonymous broker, whatever credentials this process holds.
 */
export async function assertBrokerAuth(config: Pick<Config, 'natsAuth'>, url: string): Promise<void> {
  if (config.natsAuth === 'none') return;
  const access = await probeAnonymousAccess(url);
  if (access === 'unreachable') throw new NatsAccessError('NATS_UNREACHABLE', `no NATS server answers at ${url}`);
  if (access === 'anonymous') {
    throw new NatsAccessError(
      'SERVER_ACCEPTS_ANONYMOUS',
      `the NATS server at ${url} accepts connections without credentials; run it in operator mode with the config \`better-compute broker init\` writes, or set BC_NATS_AUTH=none to run without broker auth (anyone reaching it then reads and publishes everything)`,
    );
  }
}

/** A control-plane process's connection: the configured (or recorded) server, checked for broker auth, with its credentials. */
export async function connectControlPlane(config: Config, serviceName: string): Promise<NatsConnection> {
  const url = natsUrlOf(config);
  await assertBrokerAuth(config, url);
  const credentials = await controlPlaneCredentials(config, serviceName);
  return connectNats(url, serviceName, credentials ? { credentials } : {});
}
