import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { allProjections } from '../../projections/catalog.ts';
import { ensureConsoleBuilt } from '../console/consoleBuild.ts';
import { loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { connectNats, natsReachable } from '../platform/nats/connect.ts';
import { NatsServerMissingError, startNatsServer, type NatsServerProcess } from '../platform/nats/embeddedServer.ts';
import { ensureStreams } from '../platform/nats/streams.ts';
import { prepareStackBroker } from '../trust/broker/stackBroker.ts';
import { Supervisor } from './supervisor.ts';

/**
 * `npm start`: the whole stack. Uses the NATS server at BC_NATS_URL when it answers; otherwise (unless BC_NATS_URL
 * was set explicitly) runs an embedded `nats-server -js` child with its store under the data dir. With the embedded
 * server the broker enforces per-role permissions (`BC_BROKER_AUTH=operator`, default; `off` for anonymous mode):
 * each process group gets control-plane credentials of its own (`BC_NATS_CREDS`), agents join with tokens.
 */
const env = { BC_SIM_MACHINES: '4', ...process.env };
const config = loadConfig(env);
const dataDir = resolve(config.dataDir);
mkdirSync(dataDir, { recursive: true });
const log = createLogger('stack', config.logLevel);

// The API serves the web console from dist/console: build it now unless it is built from these very sources. Without
// it the API still runs; `/` then says how to build it.
await ensureConsoleBuilt(log).catch((err: unknown) => log.error({ err }, 'the web console could not be built (npm run build:console)'));

let embedded: NatsServerProcess | undefined;
let natsUrl = config.natsUrl;
const useEmbedded = config.natsEmbedded || !(await natsReachable(natsUrl));
// Broker-enforced permissions need a server that trusts our operator: the embedded one, configured here.
const brokerAuth = config.brokerAuth ?? (useEmbedded ? 'operator' : 'off');
if (brokerAuth === 'operator' && !useEmbedded) {
  log.fatal({ natsUrl }, 'BC_BROKER_AUTH=operator needs the embedded nats-server (BC_NATS_EMBEDDED=true)');
  process.exit(1);
}
const broker = brokerAuth === 'operator' ? await prepareStackBroker({ brokerDir: resolve(config.brokerDir ?? join(dataDir, 'broker')), storeDir: join(dataDir, 'nats') }) : undefined;
if (useEmbedded) {
  if (config.natsUrlExplicit && !config.natsEmbedded) {
    log.fatal({ natsUrl }, 'BC_NATS_URL does not answer');
    process.exit(1);
  }
  try {
    embedded = await startNatsServer({ storeDir: join(dataDir, 'nats'), ...(broker ? { configFile: broker.configFile } : {}) });
  } catch (err) {
    if (err instanceof NatsServerMissingError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  natsUrl = embedded.url;
  log.info({ natsUrl, storeDir: join(dataDir, 'nats'), brokerAuth }, 'started embedded nats-server');
}

const nc = await connectNats(natsUrl, 'stack', broker ? { credentials: { creds: await broker.serviceCreds('stack'), inboxPrefix: '_INBOX' } } : {});
await ensureStreams(nc, config);
await nc.close();

const childEnv = {
  ...env,
  BC_NATS_URL: natsUrl,
  BC_DATA_DIR: dataDir,
  BC_BROKER_AUTH: brokerAuth,
  ...(broker ? { BC_BROKER_DIR: broker.material.dir } : {}),
};
// One supervisor per process group, so each control-plane process connects with credentials of its own.
const supervisors: Supervisor[] = [];
const run = async (group: string[]) => {
  const creds = broker ? { BC_NATS_CREDS: await broker.writeServiceCredentials(group.join('+')) } : {};
  const supervisor = new Supervisor({ ...childEnv, ...creds }, log);
  supervisor.run(group);
  supervisors.push(supervisor);
};
await run(allProjections.map((p) => `projector:${p.name}`));
await run(['commands']);
await run(['secret-grants']);
await run(['join']);
await run(['workflow-orchestrator']);
await run(['workflow-executor']);
await run(['bmc-monitor']);
await run(['vps-reconciler']);
await run(['api']);
if (config.plugins.length > 0) await run(['plugins']);
if (config.simMachines > 0) await run(['simulated-site']);

const operatorCreds = broker ? ` --creds ${await broker.writeServiceCredentials('operator-cli')}` : '';
const api = `http://${config.httpHost}:${config.httpPort}`;
console.log(`
Better Compute is starting.
  API          ${api}   (OpenAPI: ${api}/v1/openapi.json)
  Console      ${api}/   (sign in with an API token)
  NATS         ${natsUrl}${embedded ? `   (embedded, store ${join(dataDir, 'nats')})` : ''}   broker auth: ${brokerAuth}
  Data dir     ${dataDir}
Watch the fleet:   nats sub --server ${natsUrl}${operatorCreds} 'bc.>'
Try (the admin token is written to ${join(dataDir, 'admin.token')} once the API is up):
  export AUTH="authorization: Bearer $(cat ${join(dataDir, 'admin.token')})"
  curl -s -H "$AUTH" ${api}/v1/nodes | jq
  curl -s -H "$AUTH" -X POST ${api}/v1/commands/site.create -H 'content-type: application/json' -d '{"siteId":"dc1","name":"DC 1"}'
  curl -N -H "$AUTH" ${api}/v1/events/stream
  npm run cli -- nodes ls
Stop with Ctrl-C.
`);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await Promise.all(supervisors.map((s) => s.stop()));
  await embedded?.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
// Started by a program over IPC (a test): stop with it, so a killed test run leaves no stack behind.
if (process.connected) process.on('disconnect', () => void shutdown());
