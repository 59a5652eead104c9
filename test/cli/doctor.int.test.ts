import { jetstream } from '@nats-io/jetstream';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DoctorReport, FindingCode } from '../../schemas/doctor.ts';
import { sealingAad } from '../../schemas/secrets/sealed.ts';
import { Buckets, Streams } from '../../schemas/subjects.ts';
import { createMetrics } from '../../services/api/metrics.ts';
import { buildApi } from '../../services/api/server.ts';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { MasterKey } from '../../services/secrets/masterKey.ts';
import { seal } from '../../services/secrets/sealing.ts';
import { ensureAgentDurable } from '../../services/trust/join/agentDurable.ts';
import { runDoctor, type DoctorOptions } from '../../scripts/cli/doctor/runDoctor.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { freePort } from '../support/freePort.ts';
import { tempDir } from '../support/natsServer.ts';
import { startTestBroker } from '../trust/brokerFixture.ts';
import { readAdminToken } from '../../services/auth/bootstrap.ts';

const codesOf = (report: DoctorReport) => report.findings.map((f) => f.code);
const severityOf = (report: DoctorReport, code: FindingCode) => report.findings.find((f) => f.code === code)?.severity;

/** A backbone (its own anonymous nats-server, projectors) with the HTTP API listening on a free port. */
async function startListeningStack(options: { projectors?: boolean; readyMaxLag?: number; apiAuth?: 'required' | 'off' } = {}) {
  const backbone = await startBackbone({ projectors: options.projectors ?? true });
  const config = {
    ...backbone.config,
    ...(options.readyMaxLag !== undefined ? { readyMaxLag: options.readyMaxLag } : {}),
    ...(options.apiAuth ? { apiAuth: options.apiAuth } : {}),
  };
  const app = await buildApi(
    { config, nc: backbone.nc, store: backbone.store, bus: backbone.bus, readers: backbone.readers, metrics: createMetrics() },
    backbone.log,
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const apiUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const dispose = backbone[Symbol.asyncDispose].bind(backbone);
  const run = (name: string, payload: unknown) => backbone.bus.execute({ name, payload, actor: 'test' });
  /** The doctor as an operator runs it on this stack's host (its data dir, NATS and API). */
  const doctor = (env: NodeJS.ProcessEnv = {}, more: Omit<DoctorOptions, 'env'> = {}) =>
    runDoctor({
      env: { BC_DATA_DIR: backbone.dataDir, BC_NATS_URL: backbone.nats.url, BC_NATS_AUTH: 'none', ...env },
      apiUrl,
      token: readAdminToken(backbone.dataDir) ?? '',
      ...more,
    });
  return Object.assign(backbone, {
    apiUrl,
    run,
    doctor,
    [Symbol.asyncDispose]: async () => {
      await app.close();
      await dispose();
    },
  });
}

describe('better-compute doctor', () => {
  it('reports a configuration that does not load and checks nothing else', async () => {
    using dir = tempDir();
    for (const env of [{ BC_HTTP_PORT: 'eighty' }, { BC_BROKER_AUTH: 'off' }]) {
      const report = await runDoctor({ env: { BC_DATA_DIR: dir.path, ...env } });
      expect(report.ok).toBe(false);
      expect(codesOf(report)).toEqual(['CONFIG_INVALID']);
    }
  });

  it('lists every bad setting of a better-compute.config.ts with its path', async () => {
    using dir = tempDir();
    const file = join(dir.path, 'better-compute.config.ts');
    writeFileSync(file, "export default { httpPort: 'eighty', streamReplicas: 9, lokLevel: 'debug' };\n");
    const report = await runDoctor({ env: { BC_DATA_DIR: dir.path, BC_CONFIG: file } });
    expect(codesOf(report)).toEqual(['CONFIG_INVALID']);
    const problems = report.findings[0]!.detail!.problems as { path: string }[];
    expect(problems.map((p) => p.path).sort()).toEqual(['httpPort', 'lokLevel', 'streamReplicas']);
  });

  it('reports NATS it cannot reach, or cannot find, and skips what depends on it', async () => {
    using dir = tempDir();
    const closed = await runDoctor({
      env: { BC_DATA_DIR: dir.path, BC_NATS_URL: `nats://127.0.0.1:${await freePort()}` },
      apiUrl: `http://127.0.0.1:${await freePort()}`,
    });
    expect(severityOf(closed, 'NATS_UNREACHABLE')).toBe('error');
    expect(closed.findings.find((f) => f.check === 'streams')?.code).toBe('CHECK_SKIPPED');
    expect(severityOf(closed, 'API_UNREACHABLE')).toBe('error');
    const unknown = await runDoctor({ env: { BC_DATA_DIR: dir.path } });
    expect(severityOf(unknown, 'NATS_URL_UNKNOWN')).toBe('error');
  });

  it('reports an anonymous broker as an error, once, from the server and from /readyz', async () => {
    await using stack = await startListeningStack();
    const report = await stack.doctor();
    expect(report.ok).toBe(false);
    expect(report.findings.filter((f) => f.code === 'BROKER_AUTH_OFF')).toEqual([expect.objectContaining({ check: 'broker', severity: 'error' })]);
    // Everything else on this stack is in order.
    expect(report.findings.filter((f) => f.severity === 'error').map((f) => f.code)).toEqual(['BROKER_AUTH_OFF']);
    expect(codesOf(report)).toEqual(expect.arrayContaining(['NATS_OK', 'JETSTREAM_OK', 'STREAMS_OK', 'API_OK', 'READ_MODELS_OK', 'MASTER_KEY_OK', 'CLOCK_OK']));
  });

  it('reports an API that runs without authentication', async () => {
    await using stack = await startListeningStack({ apiAuth: 'off' });
    expect(severityOf(await stack.doctor(), 'API_AUTH_OFF')).toBe('error');
  });

  it('reports a server without JetStream', async () => {
    using dir = tempDir();
    const conf = join(dir.path, 'plain.conf');
    writeFileSync(conf, 'listen: "127.0.0.1:4222"\n');
    const server = await startNatsServer({ storeDir: join(dir.path, 'store'), configFile: conf });
    try {
      const report = await runDoctor({
        env: { BC_DATA_DIR: dir.path, BC_NATS_URL: server.url, BC_NATS_AUTH: 'none' },
        apiUrl: `http://127.0.0.1:${await freePort()}`,
      });
      expect(severityOf(report, 'JETSTREAM_UNAVAILABLE')).toBe('error');
      expect(report.findings.find((f) => f.check === 'siteAgents')?.code).toBe('CHECK_SKIPPED');
    } finally {
      await server.stop();
    }
  });

  it('reports streams that are missing or not as declared', async () => {
    await using stack = await startListeningStack();
    const jsm = await jetstream(stack.nc).jetstreamManager();
    await jsm.streams.delete(Streams.work.name);
    const results = (await jsm.streams.info(Streams.agentResults.name)).config;
    await jsm.streams.update(Streams.agentResults.name, { ...results, subjects: [...results.subjects, 'bc.extra.>'] });
    const commands = (await jsm.streams.info(Streams.agentCommands.name)).config;
    await jsm.streams.delete(Streams.agentCommands.name);
    await jsm.streams.add({ ...commands, retention: 'workqueue' });
    const events = (await jsm.streams.info(Streams.events.name)).config;
    await jsm.streams.update(Streams.events.name, { ...events, duplicate_window: 5_000_000_000 });

    const report = await stack.doctor({ BC_STREAM_REPLICAS: '3' });
    const about = (code: FindingCode) => report.findings.filter((f) => f.code === code).map((f) => [f.severity, f.detail?.stream]);
    expect(about('STREAM_MISSING')).toEqual([['error', Streams.work.name]]);
    expect(about('STREAM_SUBJECTS_MISMATCH')).toEqual([['error', Streams.agentResults.name]]);
    expect(about('STREAM_RETENTION_MISMATCH')).toEqual([['error', Streams.agentCommands.name]]);
    expect(about('STREAM_SETTINGS_DRIFT')).toEqual([['warning', Streams.events.name]]);
    // Every declared stream but the deleted one exists, each with 1 replica where 3 are configured; so do the buckets.
    expect(about('STREAM_REPLICAS_MISMATCH')).toHaveLength(Object.keys(Streams).length - 1 + Object.keys(Buckets).length);
    expect(codesOf(report)).not.toContain('STREAMS_OK');
  });

  it('reports read models that are not built, and read models behind the log', async () => {
    await using unbuilt = await startListeningStack({ projectors: false });
    const missing = await unbuilt.doctor();
    expect(missing.findings.filter((f) => f.code === 'READ_MODEL_MISSING').map((f) => f.detail?.projection)).toEqual(
      expect.arrayContaining(['nodes', 'sites', 'tokens']),
    );
    expect(severityOf(missing, 'API_NOT_READY')).toBe('error');

    await using behind = await startListeningStack({ readyMaxLag: 2 });
    const { seq } = await behind.run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await expect.poll(async () => codesOf(await behind.doctor())).toContain('READ_MODELS_OK');
    // READ_MODELS_OK allows a lag of 2: the nodes read model must hold the site's event before it stops, or the lag
    // counted below is one more than the four enrolments.
    await behind.readers.get('nodes')!.waitFor(seq, 5_000);
    await behind.projectors.get('nodes')!.stop();
    for (const id of ['l1', 'l2', 'l3', 'l4']) await behind.run('metal.enroll', enrollPayload(id));
    // `/readyz` reads the log's position at most every 500 ms.
    await expect
      .poll(async () => (await behind.doctor({ BC_READY_MAX_LAG: '2' })).findings.filter((f) => f.code === 'READ_MODEL_LAGGING'), { timeout: 5_000 })
      .toEqual([expect.objectContaining({ severity: 'warning', detail: { projection: 'nodes', lag: 4 } })]);
  });

  it('reports a site whose agent is not connected, and one whose agent pulls its commands', async () => {
    await using stack = await startListeningStack();
    await stack.run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await stack.run('site.create', { siteId: 'empty', name: 'Empty' });
    const { seq } = await stack.run('metal.enroll', enrollPayload('n1'));
    await stack.readers.get('sites')!.waitFor(seq, 5_000);
    const jsm = await jetstream(stack.nc).jetstreamManager();
    const durable = await ensureAgentDurable(jsm, { role: 'site', agentId: 'site-dc1', siteId: 'dc1' });

    const agentsOf = (report: DoctorReport) => report.findings.filter((f) => f.check === 'siteAgents').map((f) => [f.detail?.siteId, f.code, f.severity]);
    expect(agentsOf(await stack.doctor())).toEqual(
      expect.arrayContaining([
        ['dc1', 'SITE_AGENT_DISCONNECTED', 'error'],
        ['empty', 'SITE_AGENT_DISCONNECTED', 'warning'],
      ]),
    );
    // An agent pulling from its durable, as `bcd site` does.
    const messages = await (await jetstream(stack.nc).consumers.get(Streams.agentCommands.name, durable)).consume({ max_messages: 8 });
    void (async () => {
      for await (const m of messages) m.ack();
    })();
    try {
      await expect
        .poll(async () => agentsOf(await stack.doctor()), { timeout: 10_000 })
        .toEqual(expect.arrayContaining([['dc1', 'SITE_AGENT_CONNECTED', 'info']]));
    } finally {
      messages.stop();
    }
  });

  it('reports the nodes of a site whose BMCs stopped answering', async () => {
    await using stack = await startListeningStack();
    await stack.run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await stack.run('metal.enroll', enrollPayload('n1'));
    await stack.run('metal.enroll', enrollPayload('n2'));
    const { seq } = await stack.run('metal.reportBmcHealth', { nodeId: 'n2', reachable: false, detail: 'connect ECONNREFUSED' });
    await stack.readers.get('nodes')!.waitFor(seq, 5_000);
    const report = await stack.doctor();
    expect(report.findings.filter((f) => f.check === 'bmc')).toEqual([
      expect.objectContaining({ code: 'BMC_UNREACHABLE', severity: 'warning', detail: { siteId: 'dc1', nodes: ['n2'] } }),
    ]);
  });

  it('reports a live bootstrap admin token and an API beyond loopback without TLS as not configured for production', async () => {
    await using stack = await startListeningStack();
    const production = async (env: NodeJS.ProcessEnv) => (await stack.doctor(env)).findings.filter((f) => f.check === 'production').map((f) => f.code);
    expect(await production({ BC_HTTP_HOST: '0.0.0.0' })).toEqual(['ADMIN_TOKEN_NOT_ROTATED', 'API_TLS_NOT_CONFIGURED', 'BROKER_MODE_NOT_CONFIGURED']);
    await stack.run('auth.revokeToken', { tokenId: 'bootstrap-admin' });
    await expect
      .poll(async () => production({ BC_NATS_AUTH: 'operator', BC_PUBLIC_URL: 'https://bc.example.net' }), { timeout: 20_000 })
      .toEqual(['PRODUCTION_CONFIGURED']);
  });

  it('skips the fleet checks with a warning when the API refuses its token', async () => {
    await using stack = await startListeningStack();
    const report = await stack.doctor({}, { token: 'bct_nobody_0000' });
    expect(severityOf(report, 'API_TOKEN_REFUSED')).toBe('warning');
    expect(report.findings.find((f) => f.check === 'bmc')?.code).toBe('CHECK_SKIPPED');
  });

  it('reports a master key that is missing, malformed, readable by others, or not the one the secrets were sealed with', async () => {
    await using stack = await startListeningStack();
    const keyFile = join(stack.dataDir, 'keys', 'master.key');
    const env = { BC_MASTER_KEY_FILE: keyFile };
    const masterKeyOf = async () => (await stack.doctor(env)).findings.filter((f) => f.check === 'masterKey').map((f) => [f.code, f.severity]);

    expect(await masterKeyOf()).toEqual([['MASTER_KEY_MISSING', 'error']]);
    mkdirSync(join(stack.dataDir, 'keys'), { recursive: true });
    const key = randomBytes(32);
    writeFileSync(keyFile, `${key.toString('base64')}\n`, { mode: 0o644 });
    chmodSync(keyFile, 0o644);
    expect(await masterKeyOf()).toEqual([['MASTER_KEY_PERMISSIONS', 'error']]);
    chmodSync(keyFile, 0o600);
    expect(await masterKeyOf()).toEqual([['MASTER_KEY_OK', 'info']]);
    writeFileSync(keyFile, 'not a key\n');
    expect(await masterKeyOf()).toEqual([['MASTER_KEY_INVALID', 'error']]);
    expect((await stack.doctor({ BC_MASTER_KEY: 'short' })).findings.find((f) => f.check === 'masterKey')?.code).toBe('MASTER_KEY_INVALID');

    // A secret sealed under another key: the doctor's key opens nothing the stack stores.
    writeFileSync(keyFile, `${key.toString('base64')}\n`);
    const other = new MasterKey(randomBytes(32));
    const edge = await stack.run('secrets.put', { secretId: 's1', kind: 'generic', version: 1, sealed: seal('value', other, sealingAad('s1', 1)) });
    await stack.readers.get('secrets')!.waitFor(edge.seq, 5_000);
    expect(await masterKeyOf()).toEqual([['MASTER_KEY_MISMATCH', 'error']]);
    rmSync(keyFile);
  });

  it('reports a clock that is off the servers', async () => {
    await using stack = await startListeningStack();
    const clockOf = async (offsetMs: number) =>
      (await stack.doctor({}, { now: () => Date.now() + offsetMs })).findings.filter((f) => f.check === 'clock').map((f) => [f.code, f.severity]);
    expect(await clockOf(0)).toEqual([['CLOCK_OK', 'info']]);
    expect(await clockOf(6_000)).toEqual([['CLOCK_SKEW', 'warning']]);
    expect(await clockOf(-90_000)).toEqual([['CLOCK_SKEW', 'error']]);
  });

  it('checks an operator-mode server with the trust chain, reads its clock, and reports credentials it refuses or that are missing', async () => {
    await using broker = await startTestBroker();
    using dir = tempDir();
    const apiUrl = `http://127.0.0.1:${await freePort()}`;
    const env = { BC_DATA_DIR: dir.path, BC_NATS_URL: broker.server.url, BC_BROKER_DIR: join(broker.dir, 'broker') };
    const report = await runDoctor({ env, apiUrl });
    expect(codesOf(report)).toEqual(expect.arrayContaining(['NATS_OK', 'BROKER_AUTH_OK', 'JETSTREAM_OK']));
    // No stack ran on this server yet: its streams are missing, and the server's clock comes from $SYS.
    expect(severityOf(report, 'STREAM_MISSING')).toBe('error');
    expect(report.findings.find((f) => f.code === 'CLOCK_OK' && f.detail?.source === 'nats')).toBeDefined();

    await using otherBroker = await startTestBroker();
    const refused = await runDoctor({ env: { ...env, BC_BROKER_DIR: join(otherBroker.dir, 'broker') }, apiUrl });
    expect(refused.findings.filter((f) => f.check === 'nats')).toEqual([expect.objectContaining({ code: 'NATS_CREDENTIALS_REFUSED', severity: 'error' })]);
    const missing = await runDoctor({ env: { ...env, BC_BROKER_DIR: join(dir.path, 'no-broker') }, apiUrl });
    expect(severityOf(missing, 'NATS_CREDENTIALS_MISSING')).toBe('error');
  });
});
