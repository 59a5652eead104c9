import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench:fleet', () => {
  it('runs a small fleet through deploy and release on an operator-mode stack and writes its figures', { timeout: 600_000 }, async () => {
    const out = join(dir, 'fleet.json');
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/bench/fleet.ts', '--quick', '--machines', '6', '--timeout', '400', '--out', out], {
      cwd: join(import.meta.dirname, '../..'),
      env: { ...process.env, BC_LOG_LEVEL: 'warn' },
      maxBuffer: 16 << 20,
    });
    const result = JSON.parse(readFileSync(out, 'utf8'));
    expect(result.errors).toEqual([]);
    expect(result.machines).toMatchObject({ requested: 6, enrolled: 6, ready: 6, deployed: 6, released: 6, failed: 0 });
    expect(result.controlPlaneCpuMsPerStep).toBeGreaterThan(0);
  });
});
