import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startAgentBackbone } from './harness.ts';

const bcd = (args: string[]) =>
  spawn(process.execPath, ['--import', 'tsx', 'daemon/bcd.ts', ...args], {
    cwd: process.cwd(),
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, BC_LOG_LEVEL: 'silent' },
  });
const exited = (child: ReturnType<typeof bcd>) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stderr }));
  });

describe('bcd', () => {
  it('exits 2 with the usage on bad arguments', async () => {
    const { code, stderr } = await exited(bcd(['site', '--site', 'dc1']));
    expect(code).toBe(2);
    expect(stderr).toContain('usage:');
  });

  it('bcd site registers, keeps its key in a 0600 file and stops cleanly on SIGTERM', async () => {
    await using env = await startAgentBackbone();
    const state = join(env.dir, 'site');
    const child = bcd(['site', '--site', 'dc7', '--nats', env.nats.url, '--state', state]);
    const done = exited(child);
    await expect.poll(() => env.registrations.map((r) => r.agentId), { timeout: 20_000 }).toContain('site-dc7');
    expect(statSync(join(state, 'identity.key')).mode & 0o777).toBe(0o600);
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });
});
