import { join, resolve } from 'node:path';
import { Inboxes } from '../../schemas/subjects.ts';
import { ensureConsoleBuilt } from '../console/consoleBuild.ts';
import { brokerDirOf, loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { connectNats } from '../platform/nats/connect.ts';
import { NatsServerMissingError, startNatsServer, type NatsServerProcess } from '../platform/nats/embeddedServer.ts';
import { NatsAccessError } from '../platform/nats/natsAccessError.ts';
import { ensureStreams } from '../platform/nats/streams.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { makePrivateDir, usePrivateUmask } from '../platform/privateTree.ts';
import { removeStackRecord, writeStackRecord } from '../platform/stackRecord.ts';
import { prepareStackBroker } from '../trust/broker/stackBroker.ts';
import { assertBrokerAuth, brokerMaterialExists } from './controlPlaneConnection.ts';
import { processGroups, stackServiceGroups } from './processLayout.ts';
import { Supervisor, spawnProgram, type SpawnServices } from './supervisor.ts';

/**
 * `npm start`: the whole stack. Without BC_NATS_URL it runs its own nats-server (`-js`, store under the data dir) on a
 * free port, whatever else listens on :4222. Broker auth is on unless BC_NATS_AUTH=none: the embedded server runs in
 * operator mode from the trust chain in the broker dir; an external server must trust that chain and refuse
 * connections without credentials. Each process group gets control-plane credentials of its own (`BC_NATS_CREDS`),
 * agents join with tokens. The server and mode are recorded in `<dataDir>/stack.json` for the data dir's other tools.
 */
const env = { BC_SIM_MACHINES: '4', ...process.env };
// Everything the stack and its children create is the owner's only (folders 0700, files 0600).
usePrivateUmask();
const startup = createLogger('stack', 'info');
const fail = (err: unknown): never => {
  if (!(err instanceof PlatformError)) throw err;
  startup.fatal({ code: err.code, reason: (err as { reason?: string }).reason }, err.message);
  process.exit(1);
};

const config = (() => {
  try {
    return loadConfig(env);
  } catch (err) {
    return fail(err);
  }
})();
const dataDir = resolve(config.dataDir);
makePrivateDir(dataDir);
const log = createLogger('stack', config.logLevel);
const storeDir = join(dataDir, 'nats');
const brokerDir = resolve(brokerDirOf(config));
const external = config.natsUrl;
const anonymousWarning =
  'broker auth is off (BC_NATS_AUTH=none): anyone who reaches the NATS server reads every subject (commands, results, tenant SSH keys) and may publish on any';
if (config.natsAuth === 'none') log.warn({ code: 'BROKER_AUTH_OFF' }, anonymousWarning);

// An external server is checked first: one that lets anyone in is the problem to report, whatever else is missing.
if (external !== undefined) await assertBrokerAuth(config, external).catch(fail);
if (config.natsAuth === 'operator' && external !== undefined && !brokerMaterialExists(brokerDir)) {
  fail(
    new NatsAccessError(
      'BROKER_MATERIAL_MISSING',
      `BC_NATS_URL names an external server but ${brokerDir} holds no trust chain: create it with \`better-compute broker init\` and run the server from the config it writes`,
    ),
  );
}
const broker =
  config.natsAuth === 'operator'
    ? await prepareStackBroker({ brokerDir, ...(external === undefined ? { storeDir } : {}), jetStreamMaxBytes: config.jetStreamMaxBytes })
    : undefined;

// The API serves the web console from dist/console: build it now unless it is built from these very sources. Without
// it the API still runs; `/` then says how to build it.
await ensureConsoleBuilt(log).catch((err: unknown) => log.error({ err }, 'the web console could not be built (npm run build:console)'));

let embedded: NatsServerProcess | undefined;
let endNatsSupervision: (() => void) | undefined;
let natsUrl: string;
if (external !== undefined) {
  natsUrl = external;
} else {
  embedded = await startNatsServer({ storeDir, ...(broker?.configFile ? { configFile: broker.configFile } : {}) }).catch((err: unknown) =>
    fail(err instanceof NatsServerMissingError ? new PlatformError('UNAVAILABLE', err.message, { cause: err }) : err),
  );
  endNatsSupervision = embedded.supervise({ log });
  natsUrl = embedded.url;
  log.info({ natsUrl, storeDir, natsAuth: config.natsAuth }, 'started embedded nats-server');
}

// The embedded server was just started with this trust chain: a slow first handshake on a loaded host is worth waiting for.
const nc = await connectNats(natsUrl, 'stack', {
  waitForServer: embedded !== undefined,
  ...(broker ? { credentials: { creds: await broker.serviceCreds('stack'), inboxPrefix: Inboxes.controlPlane } } : {}),
}).catch((err: unknown) =>
  fail(
    new PlatformError(
      'UNAVAILABLE',
      `cannot connect to ${natsUrl}${broker ? ` with credentials of the trust chain in ${brokerDir} (does the server trust its operator?)` : ''}: ${String(err)}`,
    ),
  ),
);
await ensureStreams(nc, config);
await nc.close();

const api = `http://${config.httpHost}:${config.httpPort}`;
writeStackRecord(dataDir, {
  natsUrl,
  natsAuth: config.natsAuth,
  embedded: embedded !== undefined,
  apiUrl: api,
  pid: process.pid,
  startedAt: new Date().toISOString(),
});

const childEnv = {
  ...env,
  BC_NATS_URL: natsUrl,
  BC_DATA_DIR: dataDir,
  BC_NATS_AUTH: config.natsAuth,
  ...(broker ? { BC_BROKER_DIR: broker.material.dir } : {}),
};
// One supervisor per process group, so each control-plane process connects with credentials of its own.
const supervisors: Supervisor[] = [];
const run = async (group: string[], spawn?: SpawnServices) => {
  const creds = broker ? { BC_NATS_CREDS: await broker.writeServiceCredentials(group.join('+')) } : {};
  const supervisor = new Supervisor({ ...childEnv, ...creds }, log, spawn ? { spawn } : {});
  supervisor.run(group);
  supervisors.push(supervisor);
};
for (const group of processGroups(config.processLayout, stackServiceGroups(config.plugins.length > 0))) await run(group);
// The simulated site is dev and test code: started by path as a program of its own, never imported by the product.
const simulatedSite = new URL('../../daemon/simulator/serveSimulatedSite.ts', import.meta.url);
if (config.simMachines > 0) await run(['simulated-site'], spawnProgram(simulatedSite, false));

// A person watching gets a read-only, short-lived credential, never a control-plane one.
const inspector = broker ? await broker.writeInspectorCredentials() : undefined;
const inspectorCreds = inspector ? ` --creds ${inspector.path}` : '';
console.log(`
Better Compute is starting.
  API          ${api}   (OpenAPI: ${api}/v1/openapi.json)
  Console      ${api}/   (sign in with an API token)
  NATS         ${natsUrl}${embedded ? `   (embedded, store ${storeDir})` : '   (external)'}   broker auth: ${config.natsAuth}
  Data dir     ${dataDir}
${config.natsAuth === 'none' ? `  WARNING      ${anonymousWarning}\n` : ''}Watch the fleet:   nats sub --server ${natsUrl}${inspectorCreds} 'bc.>'
               or: npm run cli -- tail --server ${natsUrl}${inspectorCreds} 'bc.>'   (agent results decoded)
${
  inspector
    ? `  (read-only; expires ${new Date(inspector.expiresAt * 1000).toISOString()}; a fresh one: npm run cli -- broker creds --inspector)
`
    : ''
}Try (the admin token is written to ${join(dataDir, 'admin.token')} once the API is up):
  export AUTH="authorization: Bearer $(cat ${join(dataDir, 'admin.token')})"
  curl -s -H "$AUTH" ${api}/v1/nodes | jq
  curl -s -H "$AUTH" -X POST ${api}/v1/commands/site.create -H 'content-type: application/json' -d '{"siteId":"dc1","name":"DC 1"}'
  curl -N -H "$AUTH" ${api}/v1/events/stream
  npm run cli -- nodes ls
  npm run cli -- doctor
Stop with Ctrl-C.
`);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  endNatsSupervision?.();
  await Promise.all(supervisors.map((s) => s.stop()));
  await embedded?.stop();
  removeStackRecord(dataDir, process.pid);
  process.exit(0);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
// Started by a program over IPC (a test): stop with it, so a killed test run leaves no stack behind.
if (process.connected) process.on('disconnect', () => void shutdown());
