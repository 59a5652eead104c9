import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModuleVersionFixture } from '../../../test/support/rolloutFleet.ts';

const script = fileURLToPath(new URL('./hostsProcess.ts', import.meta.url));

/** Starts the hosts process and resolves once every agent registered; `stop` ends it (SIGTERM, then its exit). */
export async function startHostsProcess(args: {
  natsUrl: string;
  siteId: string;
  count: number;
  dir: string;
  first: ModuleVersionFixture;
  heartbeatMs: number;
  perConnection: number;
}): Promise<{ pid: number; stop: () => Promise<void> }> {
  const seedFile = join(args.dir, 'seed.json');
  writeFileSync(seedFile, JSON.stringify({ bundle: Buffer.from(args.first.bundle).toString('base64'), params: args.first.params }));
  const argv = [args.natsUrl, args.siteId, String(args.count), join(args.dir, 'hosts'), seedFile, String(args.heartbeatMs), String(args.perConnection)];
  const proc = spawn(process.execPath, ['--import', 'tsx', script, ...argv], {
    env: { ...process.env, BC_LOG_LEVEL: 'silent' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4_000)));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('HOSTS-READY')) resolve();
    });
    proc.once('exit', (code) => reject(new Error(`hosts process exited (${code}) before its hosts were ready: ${output}`)));
  });
  return {
    pid: proc.pid!,
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
