import { join, resolve } from 'node:path';
import { Inboxes } from '../../schemas/subjects.ts';
import { brokerDirOf, loadConfig } from '../platform/config.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { createLogger } from '../platform/logger.ts';
import { connectNats } from '../platform/nats/connect.ts';
import { NatsServerMissingError } from '../platform/nats/embeddedServer.ts';
import { ensureStreams } from '../platform/nats/streams.ts';
import { prepareStackBroker } from '../trust/broker/stackBroker.ts';
import { startNatsCluster } from './natsCluster.ts';

/**
 * `npm run cluster`: a 3-node JetStream cluster on loopback for this data dir (stores and configs under
 * `<dataDir>/cluster/<node>/`, ports kept in `<dataDir>/cluster/cluster.json`), supervised like the embedded server
 * (a node that dies comes back with its store). Under `BC_NATS_AUTH=operator` (the default) every node trusts the
 * data dir's broker chain (created if missing, as `better-compute broker init` does), so `npm start` pointed at the
 * cluster runs with broker permissions. It declares the streams and buckets with `BC_STREAM_REPLICAS` (3 unless set)
 * and prints how to start the stack on it. Ctrl-C stops the nodes.
 */
const env = { BC_STREAM_REPLICAS: '3', ...process.env };
const startup = createLogger('cluster', 'info');
let config;
try {
  config = loadConfig(env);
} catch (err) {
  if (!(err instanceof PlatformError)) throw err;
  startup.fatal({ code: err.code }, err.message);
  process.exit(1);
}
const log = createLogger('cluster', config.logLevel);
const dataDir = resolve(config.dataDir);
const brokerDir = resolve(brokerDirOf(config));
const broker = config.natsAuth === 'operator' ? await prepareStackBroker({ brokerDir }) : undefined;
const cluster = await startNatsCluster({ dir: join(dataDir, 'cluster'), ...(broker ? { broker: broker.material } : {}) }).catch((err: unknown) => {
  startup.fatal({ code: err instanceof NatsServerMissingError ? err.code : 'UNAVAILABLE', err }, 'the cluster did not start');
  process.exit(1);
});
const endSupervision = cluster.supervise({ log });
const nc = await connectNats(
  cluster.url,
  'cluster',
  broker ? { credentials: { creds: await broker.serviceCreds('cluster'), inboxPrefix: Inboxes.controlPlane } } : {},
);
await ensureStreams(nc, config);
await nc.close();

// Read-only and short-lived: what a person watching needs, and no more.
const creds = broker ? ` --creds ${(await broker.writeInspectorCredentials()).path}` : '';
console.log(`
A ${cluster.nodes.length}-node NATS cluster is running (broker auth: ${config.natsAuth}, streams and buckets with ${config.streamReplicas} replicas).
${cluster.nodes.map((n) => `  ${n.name}   ${n.url}   store ${join(cluster.dir, n.name, 'store')}`).join('\n')}
Start the stack on it (same data dir${broker ? ', same trust chain' : ''}):
  BC_DATA_DIR=${dataDir} BC_NATS_URL=${cluster.url} BC_STREAM_REPLICAS=${config.streamReplicas}${config.natsAuth === 'none' ? ' BC_NATS_AUTH=none' : ''} npm start
Watch it:   nats sub --server ${cluster.url}${creds} 'bc.>'
Stop with Ctrl-C.
`);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  endSupervision();
  await cluster.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
if (process.connected) process.on('disconnect', () => void shutdown());
