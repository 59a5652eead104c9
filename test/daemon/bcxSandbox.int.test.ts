import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { launchPlugin, type LaunchedPlugin } from '../../daemon/bcx/sandbox/pluginSandbox.ts';
import { pluginUserName } from '../../daemon/bcx/sandbox/pluginUser.ts';
import { FILTERED_SYSCALLS_X86_64, seccompProgram } from '../../daemon/bcx/sandbox/seccompFilter.ts';

// The plugin's executable must be readable by its own account (the checkout may sit under a 0700 home), and outside
// `/tmp`, which the sandbox replaces with its own.
const root = mkdtempSync('/var/tmp/bcx-sandbox-');
chmodSync(root, 0o755);
const probe = join(root, 'syscallProbe.py');
copyFileSync(new URL('../fixtures/bcx/syscallProbe.py', import.meta.url), probe);
chmodSync(probe, 0o644);
const stateRoot = join(root, 'state');
mkdirSync(stateRoot);
// World-readable on purpose: the sandbox must hide the daemon's own files, not rely on their modes.
writeFileSync(join(stateRoot, 'daemon-secret'), 'agent key', { mode: 0o644 });
const ids = ['sandbox-probe-a', 'sandbox-probe-b'];

interface ProbeReport {
  uid: number;
  errno: Record<string, number>;
  readOther: number;
  writeOwn: number;
  fork: number;
  readDaemonState: number;
}

async function report(plugin: LaunchedPlugin): Promise<ProbeReport> {
  let out = '';
  let err = '';
  plugin.child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  plugin.child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => plugin.child.on('exit', resolve));
  expect(code, err).toBe(0);
  return JSON.parse(out) as ProbeReport;
}

const EPERM = 1;
const EACCES = 13;

afterAll(() => {
  for (const id of ids) execFileSync('userdel', [pluginUserName(id)], { stdio: 'ignore' });
  rmSync(root, { recursive: true, force: true });
});

describe('bcx plugin sandbox', () => {
  it('refuses every mount, namespace, bpf and module call with EPERM, under its own account, and keeps it out of other plugins’ state', async () => {
    const other = await launchPlugin({ pluginId: ids[1]!, executable: '/usr/bin/python3', args: ['-c', 'pass'], stateRoot });
    await new Promise((resolve) => other.child.on('exit', resolve));
    const plugin = await launchPlugin({
      pluginId: ids[0]!,
      executable: '/usr/bin/python3',
      args: [probe, other.stateDir, join(stateRoot, 'plugins', ids[0]!)],
      stateRoot,
    });
    const result = await report(plugin);

    expect(plugin.user!.uid).not.toBe(other.user!.uid);
    expect(result.uid).toBe(plugin.user!.uid);
    expect(result.uid).not.toBe(0);
    const refused = Object.fromEntries(Object.keys(result.errno).map((call) => [call, EPERM]));
    expect(result.errno).toEqual(refused);
    // The probe tries every call the filter names (a call added to the filter must be added to the probe).
    const probed = Object.keys(result.errno).map((call) => call.replace(/\(.*$/, ''));
    expect(probed).toEqual(expect.arrayContaining(Object.keys(FILTERED_SYSCALLS_X86_64)));
    expect(probed).toEqual(expect.arrayContaining(['clone']));
    expect(result.readOther).toBe(EACCES);
    expect(result.writeOwn).toBe(0);
    expect(result.readDaemonState).toBe(2);
    // Ordinary work still runs: a plain fork is a clone without namespace flags.
    expect(result.fork).toBe(0);
  });

  it('refuses each call by the seccomp filter itself: root under the filter alone, with every capability, gets EPERM', async () => {
    // Under its own account most calls would fail for want of a capability anyway; this proves the filter.
    const child = spawn(
      'bwrap',
      ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--seccomp', '3', '--', '/usr/bin/python3', probe, '/nonexistent', root],
      {
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      },
    );
    (child.stdio[3] as Writable).end(seccompProgram());
    const result = await report({ child: child, stateDir: root });
    expect(result.uid).toBe(0);
    expect(result.errno).toEqual(Object.fromEntries(Object.keys(result.errno).map((call) => [call, EPERM])));
    expect(result.fork).toBe(0);
  });

  it('lifts the filter and the account for a plugin on the privileged list', async () => {
    const plugin = await launchPlugin({
      pluginId: 'sandbox-probe-privileged',
      executable: '/usr/bin/python3',
      args: [probe, '/nonexistent', root],
      stateRoot,
      privileged: true,
    });
    const result = await report(plugin);
    expect(plugin.user).toBeUndefined();
    expect(result.uid).toBe(0);
    for (const [call, errno] of Object.entries(result.errno)) expect({ call, errno }).not.toEqual({ call, errno: EPERM });
    expect(result.errno['unshare(CLONE_NEWNS)']).toBe(0);
  });
});
