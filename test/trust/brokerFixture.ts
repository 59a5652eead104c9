import { connect, type NatsConnection } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer, type NatsServerProcess } from '../../services/platform/nats/embeddedServer.ts';
import { brokerConnectOptions } from '../../services/platform/nats/brokerConnection.ts';
import { loadOrCreateBrokerMaterial, type BrokerMaterial, type BrokerMaterialOptions } from '../../services/trust/broker/brokerMaterial.ts';
import type { RoleGrant } from '../../services/trust/broker/permissions.ts';
import { writeServerConfig } from '../../services/trust/broker/serverConfig.ts';
import { createAgentUserKey, credsText } from '../../services/platform/nats/agentCredentials.ts';
import { issueUserJwt } from '../../services/trust/broker/userCredentials.ts';

export interface TestBroker extends AsyncDisposable {
  readonly dir: string;
  readonly material: BrokerMaterial;
  readonly server: NatsServerProcess;
  /** Connects an agent the way a real one would: its own nkey, a JWT issued for the public key only. */
  connectAgent(grant: RoleGrant, options?: { reconnect?: boolean }): Promise<{ nc: NatsConnection; publicKey: string; creds: string; inboxPrefix: string }>;
  /** Rewrites the config from the material (as a deployment would on start) and restarts the server. */
  restart(): Promise<void>;
}

/**
 * A nats-server in operator mode with the broker config of fresh material (with `options`, e.g. the account's
 * JetStream limits), in a temp dir removed on dispose.
 */
export async function startTestBroker(options: BrokerMaterialOptions = {}): Promise<TestBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'bc-broker-'));
  const material = await loadOrCreateBrokerMaterial(join(dir, 'broker'), options);
  const configPath = join(dir, 'nats.conf');
  const storeDir = join(dir, 'store');
  const rewrite = () => writeServerConfig(configPath, material, { storeDir, resolverDir: join(dir, 'resolver') });
  rewrite();
  const server = await startNatsServer({ storeDir, configFile: configPath }).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const connections: NatsConnection[] = [];
  return {
    dir,
    material,
    server,
    async connectAgent(grant, options = {}) {
      const key = createAgentUserKey();
      const issued = await issueUserJwt(material, key.publicKey, grant, { ttlSeconds: 600 });
      const creds = credsText(issued.jwt, key.seed);
      const nc = await connect({
        servers: server.url,
        ...brokerConnectOptions({ creds, inboxPrefix: issued.inboxPrefix }),
        reconnect: options.reconnect ?? false,
        reconnectTimeWait: 100,
        maxReconnectAttempts: 20,
      });
      connections.push(nc);
      return { nc, publicKey: key.publicKey, creds, inboxPrefix: issued.inboxPrefix };
    },
    async restart() {
      rewrite();
      await server.restart();
    },
    async [Symbol.asyncDispose]() {
      await Promise.allSettled(connections.map((nc) => nc.close()));
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
