import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { allProjections } from '../../projections/catalog.ts';
import { readAdminToken } from '../../services/auth/bootstrap.ts';
import { apiClient } from '../support/apiClient.ts';
import { freePort } from '../support/freePort.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';
import { startServeProcess } from '../support/serveProcess.ts';

const siteMain = fileURLToPath(new URL('./talosSiteMain.ts', import.meta.url));
// Every read model the API serves, so /readyz can become ready.
const controlPlane = ['api', 'commands', ...allProjections.map((p) => `projector:${p.name}`), 'workflow-orchestrator', 'workflow-executor'];

/** What the site process reports per machine. */
export interface MachineReport {
  runState: string;
  boots: string[];
  ramdiskBooted: boolean;
}

/**
 * The control plane as one `serve.ts` process on a nats-server of the test's own; `prepare` runs against the API
 * before the simulated site starts (so the pool its machines enroll into exists), then the site process starts
 * with the pool and the machines' host addresses.
 */
export async function startTalosStack(options: {
  machines: number;
  siteId: string;
  poolId: string;
  hostAddresses: readonly string[];
  prepare(client: ReturnType<typeof apiClient>): Promise<void>;
}) {
  const nats = await startTestNats();
  const dir = tempDir('bc-talos-');
  const httpPort = await freePort();
  const env: Record<string, string> = {
    BC_NATS_URL: nats.url,
    BC_DATA_DIR: dir.path,
    BC_HTTP_PORT: String(httpPort),
    BC_SIM_MACHINES: String(options.machines),
    BC_SIM_SITE_ID: options.siteId,
    BC_WORK_ACK_WAIT_MS: '1000',
  };
  const stops: (() => Promise<void>)[] = [];
  const dispose = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await nats[Symbol.asyncDispose]();
    dir[Symbol.dispose]();
  };
  try {
    const cp = await startServeProcess(controlPlane, env, 120_000);
    stops.push(() => cp.stop());
    const api = `http://127.0.0.1:${httpPort}`;
    // Up, not ready: read models become ready once there is something in the log to catch up with.
    const waitFor = async (path: string) => {
      for (let i = 0; !(await fetch(`${api}${path}`).then((r) => r.ok, () => false)); i++) {
        if (i > 1_200) throw new Error(`api ${path} did not answer ok in 120 s:\n${cp.output().slice(-4000)}`);
        await sleep(100);
      }
    };
    await waitFor('/healthz');
    const token = readAdminToken(dir.path) ?? '';
    const client = apiClient(api, token);
    await options.prepare(client);

    let output = '';
    const child: ChildProcess = fork(siteMain, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, BC_LOG_LEVEL: 'warn', ...env, BC_TEST_TALOS_POOL_ID: options.poolId, BC_TEST_TALOS_HOST_ADDRESSES: options.hostAddresses.join(',') },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const collect = (d: Buffer) => (output = (output + d.toString()).slice(-100_000));
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    stops.push(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((done) => child.once('exit', () => done()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    });
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`simulated site did not start:\n${output}`)), 120_000);
      child.on('message', (m: { type?: string }) => {
        if (m.type !== 'ready') return;
        clearTimeout(timer);
        ready();
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        fail(new Error(`simulated site exited (${code}) during start-up:\n${output}`));
      });
    });

    await waitFor('/readyz');

    let nextId = 0;
    const machines = (): Promise<Record<string, MachineReport>> =>
      new Promise((resolve, reject) => {
        const id = ++nextId;
        const timer = setTimeout(() => reject(new Error('simulated site did not answer the machines query')), 5_000);
        const onMessage = (m: { type?: string; id?: number; answer?: Record<string, MachineReport> }) => {
          if (m.type !== 'machines' || m.id !== id) return;
          clearTimeout(timer);
          child.off('message', onMessage);
          resolve(m.answer ?? {});
        };
        child.on('message', onMessage);
        child.send({ type: 'machines', id });
      });

    return {
      nats,
      env,
      dataDir: dir.path,
      api,
      token,
      client,
      machines,
      logs: () => `--- control plane\n${cp.output().slice(-4000)}\n--- site\n${output.slice(-4000)}`,
      [Symbol.asyncDispose]: dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}
