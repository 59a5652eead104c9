import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runDoctorCli } from '../support/doctorCli.ts';
import { freePort } from '../support/freePort.ts';
import { tempDir } from '../support/natsServer.ts';
import { startStackProcess } from '../support/stackProcess.ts';

const examples = fileURLToPath(new URL('../../examples/', import.meta.url));
const configs = readdirSync(examples, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.config.ts'));

/**
 * Every example deployment config as an operator uses it (issue 38): `npm start` with it (BC_CONFIG) comes up, its
 * read models migrate, and `better-compute doctor` against that stack finds no error.
 */
describe('example deployment configs', () => {
  it('there is at least one', () => expect(configs.length).toBeGreaterThan(0));

  it.each(configs)('%s starts the stack, migrates the read models and passes the doctor with no error', { timeout: 360_000 }, async (file) => {
    using dir = tempDir();
    const env = { BC_DATA_DIR: dir.path, BC_CONFIG: join(examples, file) };
    // The port is the test's own (several runs share this machine); the rest is the example's.
    await using stack = await startStackProcess(env, await freePort());
    const { status, report } = await runDoctorCli(env);
    expect(
      report.findings.filter((f) => f.severity === 'error'),
      stack.output(),
    ).toEqual([]);
    expect(status).toBe(0);
    expect(report.findings.map((f) => f.code)).toEqual(expect.arrayContaining(['CONFIG_OK', 'BROKER_AUTH_OK', 'STREAMS_OK', 'READ_MODELS_OK', 'API_OK']));
  });
});
