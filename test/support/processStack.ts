import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { Inboxes } from '../../schemas/subjects.ts';
import { readAdminToken } from '../../services/auth/bootstrap.ts';
import { stepPathServices } from '../../services/stack/processLayout.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { prepareStackBroker } from '../../services/trust/broker/stackBroker.ts';
import { issueJoinCredentials } from '../../services/trust/broker/userCredentials.ts';
import { apiClient } from './apiClient.ts';
import { freePort } from './freePort.ts';
import { startTestCluster } from './natsCluster.ts';
import { tempDir } from './natsServer.ts';
import { startServeProcess, type ServeProcess } from './serveProcess.ts';
import { startSimulatedSiteProcess } from './simulatedSiteProcess.ts';

const projectors = ['projectors'];
const controlPlane = ['api', 'commands', 'join', ...projectors, 'workflow-orchestrator', 'workflow-executor', 'vps-reconciler'];

/** Process groups: `split` gives the executor a process of its own (to kill); `single` is one process, fastest to start. */
const layouts = {
  split: {
    front: ['api', 'commands', 'join'],
    projectors,
    orchestrator: ['workflow-orchestrator', 'vps-reconciler'],
    executor: ['workflow-executor'],
  },
  single: { controlPlane },
  /** As `npm start` groups them under BC_PROCESS_LAYOUT=compact: the step path in one process (first: it answers commands). */
  compact: {
    stepPath: stepPathServices,
    front: ['api', 'vps-reconciler'],
  },
  /** `split` with the commands service in a process of its own (first: the site enrolls through it), to kill alone. */
  isolated: {
    commands: ['commands'],
    front: ['api', 'join'],
    projectors,
    orchestrator: ['workflow-orchestrator', 'vps-reconciler'],
    executor: ['workflow-executor'],
  },
  /**
   * Two of each engine replica: one orchestrator leads (lease), both executors share the work, both `commands`
   * replicas share the command partitions.
   */
  replicated: {
    front: ['api', 'commands', 'join', 'vps-reconciler'],
    commandsB: ['commands'],
    projectors,
    orchestratorA: ['workflow-orchestrator'],
    orchestratorB: ['workflow-orchestrator'],
    executorA: ['workflow-executor'],
    executorB: ['workflow-executor'],
  },
} as const satisfies Record<string, Record<string, readonly string[]>>;

/**
 * The control plane as `serve.ts` processes the test owns, on a nats-server of its own (`startTestNats`), plus the
 * simulated site as its own process (BMC request logs readable over IPC). `env` goes to every process. `beforeSite`
 * runs against the API of the first group before the site starts (e.g. to create the pool its machines enroll into).
 */
export async function startProcessStack<L extends keyof typeof layouts>(options: {
  layout: L;
  machines: number;
  env?: Record<string, string>;
  beforeSite?: (client: ReturnType<typeof apiClient>) => Promise<void>;
  /** On a 3-node JetStream cluster of the test's own (streams and buckets with 3 replicas) instead of one server. */
  cluster?: boolean;
}) {
  const dir = tempDir('bc-acc-');
  // Operator mode, as `npm start` runs: without broker auth the executor refuses deploys, releases and retirements.
  const brokerDir = join(dir.path, 'broker');
  const broker = await prepareStackBroker({ brokerDir, storeDir: join(dir.path, 'nats') });
  const cluster = options.cluster ? await startTestCluster({ broker: broker.material }) : undefined;
  if (cluster) await issueJoinCredentials(broker.material);
  const nats = cluster
    ? { url: cluster.url, [Symbol.asyncDispose]: () => cluster[Symbol.asyncDispose]() }
    : await startNatsServer({ storeDir: join(dir.path, 'nats'), configFile: broker.configFile! }).then((server) =>
        Object.assign(server, { [Symbol.asyncDispose]: () => server.stop() }),
      );
  const httpPort = await freePort();
  const env: Record<string, string> = {
    BC_NATS_URL: nats.url,
    BC_NATS_AUTH: 'operator',
    // Each process issues its control-plane credentials from the trust chain here.
    BC_BROKER_DIR: brokerDir,
    BC_DATA_DIR: dir.path,
    BC_HTTP_PORT: String(httpPort),
    BC_SIM_MACHINES: String(options.machines),
    BC_SIM_BMC_PORT_BASE: '0',
    BC_WORK_ACK_WAIT_MS: '1000',
    ...(cluster ? { BC_STREAM_REPLICAS: '3' } : {}),
    ...options.env,
  };
  /** A connection of the test's own, with control-plane credentials (the server lets no one in without). */
  const connect = async (name: string): Promise<NatsConnection> =>
    connectNats(nats.url, name, { credentials: { creds: await broker.serviceCreds(name), inboxPrefix: Inboxes.controlPlane } });
  const started: { stop(): Promise<void> }[] = [];
  const dispose = async () => {
    for (const p of started.reverse()) await p.stop().catch(() => undefined);
    await nats[Symbol.asyncDispose]();
    dir[Symbol.dispose]();
  };
  try {
    // The first group (it answers commands) starts alone: the simulated site enrolls its machines through it. The rest
    // start together; each process declares the same streams, which is idempotent.
    const groups = Object.entries(layouts[options.layout]) as [keyof (typeof layouts)[L], string[]][];
    const processes = {} as Record<keyof (typeof layouts)[L], ServeProcess>;
    const track = <P extends { stop(): Promise<void> }>(p: Promise<P>) => p.then((started_) => (started.push(started_), started_));
    const [first, ...rest] = groups;
    processes[first![0]] = await track(startServeProcess(first![1], env, 120_000));
    const api = `http://127.0.0.1:${httpPort}`;
    if (options.beforeSite) {
      // Up, not ready: read models become ready once there is something in the log to catch up with.
      await waitForOk(`${api}/healthz`);
      await options.beforeSite(apiClient(api, readAdminToken(dir.path) ?? ''));
    }
    const sitePromise = track(startSimulatedSiteProcess(env, 120_000));
    const restPromises = rest.map(([, services]) => track(startServeProcess(services, env, 120_000)));
    // allSettled: every process that did start is tracked (and stopped on failure) before anything is thrown.
    const failure = (await Promise.allSettled([sitePromise, ...restPromises])).find((r) => r.status === 'rejected');
    if (failure) throw failure.reason;
    const site = await sitePromise;
    for (const [i, [name]] of rest.entries()) processes[name] = await restPromises[i]!;
    await waitForOk(`${api}/readyz`);
    const all = processes as Record<string, ServeProcess>;
    return {
      nats: nats as unknown as L extends 'replicated' ? { url: string } : Awaited<ReturnType<typeof startNatsServer>>,
      connect,
      cluster,
      dataDir: dir.path,
      api,
      /** The bootstrap admin token the API wrote to the data dir. */
      token: readAdminToken(dir.path) ?? '',
      env,
      processes,
      site,
      /** The tail of every process's output, for a failing test's message. */
      logs: () =>
        Object.entries(all)
          .map(([name, p]) => `--- ${name}\n${p.output().slice(-6000)}`)
          .join('\n') + `\n--- site\n${site.output().slice(-3000)}`,
      [Symbol.asyncDispose]: dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}

async function waitForOk(url: string): Promise<void> {
  for (
    let i = 0;
    !(await fetch(url).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (i > 1_200) throw new Error(`${url} did not answer ok in 120 s`);
    await sleep(100);
  }
}
