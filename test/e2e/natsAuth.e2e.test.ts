import { jetstreamManager } from '@nats-io/jetstream';
import { AuthorizationError, connect, PermissionViolationError } from '@nats-io/transport-node';
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readStackRecord } from '../../services/platform/stackRecord.ts';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { brokerConnectOptions } from '../../services/platform/nats/brokerConnection.ts';
import { runDoctor } from '../../scripts/cli/doctor/runDoctor.ts';
import { runDoctorCli } from '../support/doctorCli.ts';
import { freePort } from '../support/freePort.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';
import { startStackProcess } from '../support/stackProcess.ts';

const startScript = fileURLToPath(new URL('../../services/stack/start.ts', import.meta.url));
const cli = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));
const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();

/** Streams on a server, as an anonymous client sees them. */
async function streamNames(url: string): Promise<string[]> {
  const nc = await connect({ servers: url });
  try {
    const names: string[] = [];
    for await (const name of (await jetstreamManager(nc)).streams.names()) names.push(name);
    return names;
  } finally {
    await nc.close();
  }
}

/** `npm start` that is expected to refuse to run: its exit status and its structured log lines. */
async function startRefused(env: Record<string, string>): Promise<{ status: number | null; lines: Array<Record<string, unknown>> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', startScript], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const status = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  clearTimeout(timer);
  const lines = output.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
  return { status, lines };
}

describe('npm start and NATS authentication', () => {
  it('runs its own authenticated server while an anonymous one answers elsewhere, and the doctor finds no error', { timeout: 360_000 }, async () => {
    await using anonymous = await startTestNats();
    using dir = tempDir();
    await using stack = await startStackProcess({ BC_DATA_DIR: dir.path, BC_SIM_MACHINES: '1', BC_SIM_BMC_PORT_BASE: '0' }, await freePort());
    const record = readStackRecord(dir.path)!;
    expect(record).toMatchObject({ natsAuth: 'operator', embedded: true });
    expect(record.natsUrl).not.toBe(anonymous.url);
    // The stack's server takes no connection without credentials, and nothing of the stack went to the other one.
    await expect(connect({ servers: record.natsUrl, reconnect: false })).rejects.toBeInstanceOf(AuthorizationError);
    expect(await streamNames(anonymous.url)).toEqual([]);
    expect((await json(fetch(`${stack.api}/readyz`))).warnings).toEqual([]);

    const auth = { authorization: `Bearer ${stack.token}` };
    await expect
      .poll(async () => (await json(fetch(`${stack.api}/v1/nodes/sim-m001`, { headers: auth }))).state, { timeout: 120_000, interval: 500 })
      .toBe('ready');
    const { status, report } = await runDoctorCli({ BC_DATA_DIR: dir.path });
    expect(report.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(status).toBe(0);
    expect(report.findings.map((f) => f.code)).toEqual(
      expect.arrayContaining(['BROKER_AUTH_OK', 'STREAMS_OK', 'READ_MODELS_OK', 'SITE_AGENT_CONNECTED', 'BMC_OK', 'MASTER_KEY_OK', 'CLOCK_OK']),
    );
  });

  it(
    'refuses an external server that lets anyone in (BC_NATS_AUTH=none is the only way onto one), and refuses retired settings',
    { timeout: 120_000 },
    async () => {
      await using anonymous = await startTestNats();
      using dir = tempDir();
      const refused = await startRefused({ BC_DATA_DIR: dir.path, BC_NATS_URL: anonymous.url, BC_HTTP_PORT: String(await freePort()), BC_SIM_MACHINES: '0' });
      expect(refused.status).toBe(1);
      expect(refused.lines.find((l) => l.level === 60)).toMatchObject({ reason: 'SERVER_ACCEPTS_ANONYMOUS' });
      expect(await streamNames(anonymous.url)).toEqual([]);
      // The retired settings are refused rather than ignored.
      const retired = await startRefused({ BC_DATA_DIR: dir.path, BC_BROKER_AUTH: 'off', BC_HTTP_PORT: String(await freePort()) });
      expect(retired.status).toBe(1);
      expect(retired.lines.find((l) => l.level === 60)).toMatchObject({ reason: 'RETIRED_SETTING' });
    },
  );

  it('runs on an external operator-mode server made with `better-compute broker init`, where broker permissions apply', { timeout: 180_000 }, async () => {
    using dir = tempDir();
    const brokerDir = join(dir.path, 'broker');
    const conf = join(dir.path, 'nats.conf');
    execFileSync(
      process.execPath,
      [cli, 'broker', 'init', '--broker-dir', brokerDir, '--store-dir', join(dir.path, 'store'), '--listen', `127.0.0.1:${await freePort()}`, '--out', conf],
      {
        env: { ...process.env },
      },
    );
    const server = await startNatsServer({ storeDir: join(dir.path, 'store'), configFile: conf });
    try {
      const env = { BC_DATA_DIR: join(dir.path, 'data'), BC_NATS_URL: server.url, BC_BROKER_DIR: brokerDir, BC_SIM_MACHINES: '0' };
      await using stack = await startStackProcess(env, await freePort());
      expect(readStackRecord(env.BC_DATA_DIR)).toMatchObject({ natsUrl: server.url, natsAuth: 'operator', embedded: false });
      expect((await json(fetch(`${stack.api}/readyz`))).warnings).toEqual([]);
      await expect(connect({ servers: server.url, reconnect: false })).rejects.toBeInstanceOf(AuthorizationError);
      // The public join credential may only ask to join: a command is a permission violation.
      const joiner = await connect({
        servers: server.url,
        ...brokerConnectOptions({ creds: readFileSync(join(brokerDir, 'join.creds'), 'utf8'), inboxPrefix: '_INBOX_join' }),
      });
      try {
        await expect(joiner.request('bc.cmd.site.create', JSON.stringify({ siteId: 'x', name: 'x' }), { timeout: 2_000 })).rejects.toSatisfy(
          (err: Error) => err instanceof PermissionViolationError || err.cause instanceof PermissionViolationError,
        );
      } finally {
        await joiner.close();
      }
      const report = await runDoctor({ env, apiUrl: stack.api, token: stack.token });
      expect(report.findings.filter((f) => f.severity === 'error')).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
