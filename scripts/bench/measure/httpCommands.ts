import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { meterProcess } from '../cpuMeter.ts';
import { figure, startTiming, type Figure } from '../figure.ts';
import { jsonClient } from '../httpClient.ts';
import { pipelined } from '../pipeline.ts';

const API_SCRIPT = fileURLToPath(new URL('../apiServer.ts', import.meta.url));

/** Starts `apiServer.ts` in its own node process and resolves with its port once it listens. */
async function startApiProcess(env: {
  natsUrl: string;
  dataDir: string;
  nodeArgs: string[];
  variantEnv: Record<string, string>;
}): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...env.nodeArgs, '--import', 'tsx', API_SCRIPT], {
    env: { ...process.env, BC_NATS_URL: env.natsUrl, BENCH_DATA_DIR: env.dataDir, ...env.variantEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
  const lines = createInterface({ input: child.stdout });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`api process did not listen within 30 s: ${stderr}`)), 30_000);
    child.once('exit', (code) => reject(new Error(`api process exited with ${code}: ${stderr}`)));
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve((JSON.parse(line) as { port: number }).port);
      } catch {
        reject(new Error(`api process printed ${line}`));
      }
    });
  });
  return { child, port };
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

const enrollBody = (siteId: string, nodeId: string, i: number) => ({
  nodeId,
  siteId,
  bmc: { address: `https://10.1.${(i >> 8) & 255}.${i & 255}`, credentialsRef: 'secret:bmc-bench' },
  hardwareProfile: 'default',
  macs: ['52:54:00:12:34:56'],
});

/**
 * HTTP command round trips against a real listening API in a child process: one `site.create`, then `metal.enroll`
 * of distinct nodes from `concurrency` keep-alive connections. Every response must be 201.
 */
export async function measureHttpCommands(options: {
  natsUrl: string;
  dataDir: string;
  count: number;
  warmup: number;
  concurrency: number;
  nodeArgs: string[];
  /** A bench variant of the API process (env flags read by apiServer.ts), reported as its own row. */
  variant?: { name: string; env: Record<string, string> };
}): Promise<Figure> {
  const { child, port } = await startApiProcess({ ...options, variantEnv: options.variant?.env ?? {} });
  const client = jsonClient(port, options.concurrency);
  meterProcess('api', child.pid);
  try {
    const tag = Date.now().toString(36);
    const siteId = `bench-http-${tag}`;
    const site = await client.post('/v1/commands/site.create', { siteId, name: 'bench', provisioningCidrs: ['10.1.0.0/16'] });
    if (site.status !== 201) throw new Error(`site.create answered ${site.status}: ${site.body}`);
    const enroll = (prefix: string) => async (i: number) => {
      const res = await client.post('/v1/commands/metal.enroll', enrollBody(siteId, `${prefix}-${tag}-${i}`, i));
      if (res.status !== 201) throw new Error(`metal.enroll answered ${res.status}: ${res.body}`);
    };
    await pipelined(options.warmup, options.concurrency, enroll('hw'));
    const timing = startTiming();
    await pipelined(options.count, options.concurrency, enroll('hn'));
    const measured = timing();
    return figure({
      key: options.variant ? `httpCommands:${options.variant.name}` : 'httpCommands',
      label: `HTTP metal.enroll (${options.concurrency} conns)${options.variant ? ` [${options.variant.name}]` : ''}`,
      count: options.count,
      timing: measured,
      unit: 'req/s',
      target: { kind: 'minRate', value: 3_000 },
      detail: { concurrency: options.concurrency, variantEnv: options.variant?.env },
    });
  } finally {
    meterProcess('api', undefined);
    client.close();
    await stopProcess(child);
  }
}
