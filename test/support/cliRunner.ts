import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const bin = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));
const run = promisify(execFile);

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `better-compute --api <api> …args` as an operator runs it, with its exit code. `token` empty (the default): the CLI
 * finds the bootstrap admin token in `BC_DATA_DIR`, as it does next to `npm start`.
 */
export async function runCli(api: string, dataDir: string, args: readonly string[], token = ''): Promise<CliOutcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, '--api', api, ...args], {
      env: { ...process.env, BC_DATA_DIR: dataDir, BC_API_TOKEN: token },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as CliOutcome;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
