import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { allProjections } from '../../projections/catalog.ts';
import { loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { connectNats, natsReachable } from '../platform/nats/connect.ts';
import { NatsServerMissingError, startNatsServer, type NatsServerProcess } from '../platform/nats/embeddedServer.ts';
import { ensureStreams } from '../platform/nats/streams.ts';
import { Supervisor } from './supervisor.ts';

/**
 * `npm start`: the whole stack. Uses the NATS server at BC_NATS_URL when it answers; otherwise (unless BC_NATS_URL
 * was set explicitly) runs an embedded `nats-server -js` child with its store under the data dir.
 */
const env = { BC_SIM_MACHINES: '4', ...process.env };
const config = loadConfig(env);
const dataDir = resolve(config.dataDir);
mkdirSync(dataDir, { recursive: true });
const log = createLogger('stack', config.logLevel);

let embedded: NatsServerProcess | undefined;
let natsUrl = config.natsUrl;
if (config.natsEmbedded || !(await natsReachable(natsUrl))) {
  if (config.natsUrlExplicit && !config.natsEmbedded) {
    log.fatal({ natsUrl }, 'BC_NATS_URL does not answer');
    process.exit(1);
  }
  try {
    embedded = await startNatsServer({ storeDir: join(dataDir, 'nats') });
  } catch (err) {
    if (err instanceof NatsServerMissingError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  natsUrl = embedded.url;
  log.info({ natsUrl, storeDir: join(dataDir, 'nats') }, 'started embedded nats-server');
}

const nc = await connectNats(natsUrl, 'stack');
await ensureStreams(nc, config);
await nc.close();

const childEnv = { ...env, BC_NATS_URL: natsUrl, BC_DATA_DIR: dataDir };
const supervisor = new Supervisor(childEnv, log);
supervisor.run(allProjections.map((p) => `projector:${p.name}`));
supervisor.run(['commands']);
supervisor.run(['workflow-orchestrator']);
supervisor.run(['workflow-executor']);
supervisor.run(['api']);
if (config.simMachines > 0) supervisor.run(['simulated-site']);

const api = `http://${config.httpHost}:${config.httpPort}`;
console.log(`
Better Compute is starting.
  API          ${api}   (OpenAPI: ${api}/v1/openapi.json)
  NATS         ${natsUrl}${embedded ? `   (embedded, store ${join(dataDir, 'nats')})` : ''}
  Data dir     ${dataDir}
Watch the fleet:   nats sub --server ${natsUrl} 'bc.>'
Try:
  curl -s ${api}/v1/nodes | jq
  curl -s -X POST ${api}/v1/commands/site.create -H 'content-type: application/json' -d '{"siteId":"dc1","name":"DC 1"}'
  curl -N ${api}/v1/events/stream
Stop with Ctrl-C.
`);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await supervisor.stop();
  await embedded?.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
