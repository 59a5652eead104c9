import { getPriority } from 'node:os';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { yieldCpuIfBackground } from '../../services/stack/backgroundPriority.ts';

describe('yieldCpuIfBackground', () => {
  it('lowers the priority of a process of background services only, and of nothing that serves the command path', () => {
    const set: number[] = [];
    const record = { get: () => 0, set: (nice: number) => void set.push(nice) };
    expect(yieldCpuIfBackground(['vps-reconciler'], 10, record)).toBe(10);
    expect(yieldCpuIfBackground(['fleet-sensors', 'autonomy-engine'], 7, record)).toBe(7);
    expect(yieldCpuIfBackground(['bmc-monitor', 'commands'], 10, record)).toBeUndefined();
    expect(yieldCpuIfBackground(['api'], 10, record)).toBeUndefined();
    expect(yieldCpuIfBackground(['vps-reconciler'], 0, record)).toBeUndefined();
    expect(yieldCpuIfBackground([], 10, record)).toBeUndefined();
    expect(set).toEqual([10, 7]);
    // Never raised: a process started nicer than the setting stays as nice.
    expect(yieldCpuIfBackground(['vps-reconciler'], 10, { get: () => 15, set: record.set })).toBe(15);
    expect(set).toEqual([10, 7]);
  });

  it('sets the nice value of the process itself, without privileges', () => {
    // In a child of its own: the test process keeps its priority.
    const script = `import('${new URL('../../services/stack/backgroundPriority.ts', import.meta.url).href}').then((m) => { m.yieldCpuIfBackground(['vps-reconciler'], 10); console.log(require('node:os').getPriority()); })`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(Number(child.stdout.trim())).toBe(Math.max(getPriority(), 10));
  });
});
