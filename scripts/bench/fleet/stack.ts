import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Inboxes } from '../../../schemas/subjects.ts';
import { loadConfig } from '../../../services/platform/config.ts';
import { startNatsServer, type NatsServerProcess } from '../../../services/platform/nats/embeddedServer.ts';
import { ensureStreams } from '../../../services/platform/nats/streams.ts';
import { connectNats } from '../../../services/platform/nats/connect.ts';
import { natsServerPid } from '../cpuMeter.ts';
import { freePort } from '../../../test/support/freePort.ts';
import type { FleetOptions } from './options.ts';
import { processGroups } from '../../../services/stack/processLayout.ts';
import { prepareStackBroker } from '../../../services/trust/broker/stackBroker.ts';
import { benchObserverCreds } from './observerCreds.ts';
import { CONTROL_PLANE, startServices, stopChild, type Child } from './processes.ts';

export interface FleetStack {
  nats: NatsServerProcess;
  natsPid: number | undefined;
  /** The driver's connection, with control-plane credentials (commands must be signed by one). */
  nc: NatsConnection;
  /** Counts every process's requests, JetStream API calls included (`NatsTraffic`). */
  observer: NatsConnection;
  services: Child[];
  api: string;
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

const durables = ['projectors', 'workflow_orchestrator'];

/**
 * One nats-server in `dir` in operator mode (broker auth, as `npm start` runs it: the executor refuses deploys and
 * releases without it), the streams, and the control-plane services in `serve.ts` processes as `options.layout`
 * groups them, each issuing its own credentials from the trust chain in `<dir>/broker`.
 */
export async function startFleetStack(dir: string, options: FleetOptions): Promise<FleetStack> {
  const brokerDir = join(dir, 'broker');
  const broker = await prepareStackBroker({ brokerDir, storeDir: join(dir, 'nats') });
  // BENCH_NATS_ARGS passes flags to the server, e.g. `--profile 6061` to read its Go profile while the fleet runs.
  const extraArgs = (process.env.BENCH_NATS_ARGS ?? '').split(' ').filter(Boolean);
  const nats = await startNatsServer({ storeDir: join(dir, 'nats'), configFile: broker.configFile!, extraArgs });
  const nc = await connectNats(nats.url, 'fleet-bench', {
    credentials: { creds: await broker.serviceCreds('fleet-bench'), inboxPrefix: Inboxes.controlPlane },
  });
  const observer = await connectNats(nats.url, 'fleet-bench-observer', {
    credentials: { creds: await benchObserverCreds(broker.material), inboxPrefix: Inboxes.controlPlane },
  });
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const httpPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BC_NATS_URL: nats.url,
    BC_NATS_AUTH: 'operator',
    BC_BROKER_DIR: brokerDir,
    BC_DATA_DIR: dataDir,
    BC_HTTP_PORT: String(httpPort),
    BC_LOG_LEVEL: process.env.BC_LOG_LEVEL ?? 'warn',
    BC_SIM_MACHINES: '0',
    BC_MAX_DEPLOYS_PER_SITE: String(options.cap),
    BC_MAX_WIPES_PER_SITE: String(options.cap),
    BC_EXECUTOR_CONCURRENCY: String(options.executorConcurrency),
    ...(options.workflowsInFlight ? { BC_MAX_WORKFLOWS_IN_FLIGHT: String(options.workflowsInFlight) } : {}),
    BC_RESULT_RECHECK_MS: String(options.resultRecheckMs),
  };
  await ensureStreams(nc, loadConfig(env));
  const services = processGroups(
    options.layout,
    CONTROL_PLANE.map((name) => [name]),
  ).map((group) => startServices(group, env, options.cpNodeArgs));
  const api = `http://127.0.0.1:${httpPort}`;
  try {
    await waitUntilServing(nc, services, api);
  } catch (err) {
    // A service that failed to start must not leave its siblings running after the bench exits.
    await Promise.all(services.map((s) => stopChild(s)));
    await nc.close().catch(() => undefined);
    await observer.close().catch(() => undefined);
    await nats.stop();
    throw err;
  }
  return {
    nats,
    natsPid: natsServerPid(join(dir, 'nats')),
    nc,
    observer,
    services,
    api,
    env,
    stop: async () => {
      await Promise.all(services.map((s) => stopChild(s)));
      await nc.close().catch(() => undefined);
      await observer.close().catch(() => undefined);
      await nats.stop();
    },
  };
}

/** Waits until the durable consumers exist and the command bus and HTTP API answer; throws if a service exits. */
async function waitUntilServing(nc: NatsConnection, services: Child[], api: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (let i = 0; ; i++) {
    const dead = services.find((s) => s.proc.exitCode !== null);
    if (dead) throw new Error(`${dead.name} exited during start-up:\n${dead.output()}`);
    const consumers = await Promise.all(
      durables.map((d) =>
        jsm.consumers.info('BC_EVENTS', d).then(
          () => true,
          () => false,
        ),
      ),
    );
    const work = await jsm.consumers.info('BC_WORK', 'workflow_executor').then(
      () => true,
      () => false,
    );
    const commands = await nc.request('bc.cmd.site.create', '{}', { timeout: 1_000 }).then(
      () => true,
      () => false,
    );
    const http = await fetch(`${api}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (consumers.every(Boolean) && work && commands && http) return;
    if (i > 600) throw new Error(`control plane did not start:\n${services.map((s) => `${s.name}: ${s.output()}`).join('\n')}`);
    await sleep(100);
  }
}
