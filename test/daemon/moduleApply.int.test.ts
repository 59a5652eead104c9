import { existsSync, lstatSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentErrorCodeOf } from '../../daemon/agent/errors.ts';
import { moduleReporter } from '../../daemon/node/modules/moduleState.ts';
import { hostFixture, moduleBundle, snapshot } from './moduleSupport.ts';
import { newPublisher } from '../fleet/bundleFixture.ts';

const codeOf = async (work: Promise<unknown>) => work.then(() => 'applied', agentErrorCodeOf);

describe('bcd node applies modules', () => {
  it('unpacks v1, switches current to v2 keeping v1, and keeps only the previous version past v3', async () => {
    using env = hostFixture();
    const v1 = moduleBundle('1.0.0');
    const first = await env.host.apply(v1.params, v1.bundle);
    expect(first).toMatchObject({
      changed: true,
      previous: null,
      state: 'active',
      probes: [{ name: 'runs', ok: true, exitCode: 0, output: 'resolver 1.0.0\n' }],
    });
    const dir = join(env.modules, 'resolver');
    expect(readlinkSync(join(dir, 'current'))).toBe('1.0.0');
    expect(readFileSync(join(dir, 'current/etc/resolver.conf'), 'utf8')).toBe('version 1.0.0\n');
    expect(statSync(join(dir, '1.0.0/bin/resolver')).mode & 0o777).toBe(0o755);
    expect(statSync(join(dir, '1.0.0/etc/resolver.conf')).mode & 0o777).toBe(0o644);

    const v2 = moduleBundle('1.1.0');
    expect(await env.host.apply(v2.params, v2.bundle)).toMatchObject({
      changed: true,
      previous: '1.0.0',
      state: 'active',
      probes: [{ output: 'resolver 1.1.0\n' }],
    });
    expect(readlinkSync(join(dir, 'current'))).toBe('1.1.0');
    expect(readFileSync(join(dir, '1.0.0/etc/resolver.conf'), 'utf8')).toBe('version 1.0.0\n');

    const v3 = moduleBundle('2.0.0');
    await env.host.apply(v3.params, v3.bundle);
    expect(existsSync(join(dir, '1.0.0'))).toBe(false);
    expect(existsSync(join(dir, '.records/1.0.0.json'))).toBe(false);
    expect(existsSync(join(dir, '1.1.0/bin/resolver'))).toBe(true);
    // Rolling back to the kept version reuses its folder and keeps the one it leaves.
    expect(await env.host.apply(v2.params, v2.bundle)).toMatchObject({ changed: true, previous: '2.0.0', repaired: [] });
    expect(readlinkSync(join(dir, 'current'))).toBe('1.1.0');
    expect(existsSync(join(dir, '2.0.0'))).toBe(true);
  });

  it('applying the current version again changes nothing on disk', async () => {
    using env = hostFixture();
    const v2 = moduleBundle('1.1.0');
    await env.host.apply(v2.params, v2.bundle);
    const before = snapshot(env.stateDir);
    expect(await env.host.apply(v2.params, v2.bundle)).toMatchObject({ changed: false, previous: '1.1.0', state: 'active' });
    expect(snapshot(env.stateDir)).toEqual(before);
  });

  it("refuses a tampered or untrusted bundle with the verifier's code, and nothing on disk changes", async () => {
    using env = hostFixture();
    const v1 = moduleBundle('1.0.0');
    await env.host.apply(v1.params, v1.bundle);
    const before = snapshot(env.stateDir);
    const v2 = moduleBundle('1.1.0');
    const tampered = Uint8Array.from(v2.bundle);
    const at = Buffer.from(tampered).indexOf('version 1.1.0');
    tampered[at] = 'V'.charCodeAt(0);
    expect(await codeOf(env.host.apply(v2.params, tampered))).toBe('BUNDLE_FILE_MISMATCH');
    const stranger = { ...v2.params, trustedPublishers: [{ publisherId: 'acme', publicKey: newPublisher('acme').publicKey }] };
    expect(await codeOf(env.host.apply(stranger, v2.bundle))).toBe('BUNDLE_PUBLISHER_UNTRUSTED');
    // A genuine bundle of another version than the command names (or another digest) is not applied either.
    expect(await codeOf(env.host.apply({ ...v2.params, version: '1.2.0' }, v2.bundle))).toBe('MODULE_MISMATCH');
    expect(await codeOf(env.host.apply({ ...v2.params, manifestSha256: v1.params.manifestSha256 }, v2.bundle))).toBe('MODULE_MISMATCH');
    expect(snapshot(env.stateDir)).toEqual(before);
  });

  it('never writes through a link planted in an installed version: the link is drift, replaced by the file', async () => {
    using env = hostFixture();
    const v1 = moduleBundle('1.0.0');
    await env.host.apply(v1.params, v1.bundle);
    const victim = join(env.stateDir, 'victim');
    writeFileSync(victim, 'untouched\n');
    const conf = join(env.modules, 'resolver/1.0.0/etc/resolver.conf');
    rmSync(conf);
    symlinkSync(victim, conf);
    expect(await env.host.apply(v1.params, v1.bundle)).toMatchObject({ changed: true, repaired: [{ path: 'etc/resolver.conf', problem: 'changed' }] });
    expect(lstatSync(conf).isFile()).toBe(true);
    expect(readFileSync(conf, 'utf8')).toBe('version 1.0.0\n');
    expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
  });

  it('reports a failing probe failed, with its exit code and the tail of its output; a hung probe is killed at its timeout', async () => {
    using env = hostFixture();
    const failing = moduleBundle('1.0.0', {
      probes: [
        { name: 'fails', command: `for i in $(seq 1 200); do echo line-$i; done; echo oops >&2; exit 3`, shell: 'nonLogin' },
        { name: 'hangs', command: 'sleep 30', shell: 'nonLogin' },
      ],
    });
    const applied = await env.host.apply({ ...failing.params, probeTimeoutMs: 300 }, failing.bundle);
    expect(applied.state).toBe('failed');
    expect(applied.probes[0]).toMatchObject({ name: 'fails', ok: false, exitCode: 3 });
    expect(applied.probes[0]!.output.length).toBeLessThanOrEqual(500);
    expect(applied.probes[0]!.output).toMatch(/line-200\noops\n$/);
    expect(applied.probes[1]).toMatchObject({ name: 'hangs', ok: false, exitCode: null });
    expect(moduleReporter(env.stateDir, () => env.boot.id)()).toEqual([
      {
        name: 'resolver',
        version: '1.0.0',
        digest: failing.params.manifestSha256,
        state: 'failed',
        probes: [
          { name: 'fails', ok: false },
          { name: 'hangs', ok: false },
        ],
      },
    ]);
  });

  it("runs probes with every active module's current/bin on PATH, in a login shell too", async () => {
    using env = hostFixture();
    const tools = moduleBundle('3.0.0', { name: 'tools', probes: [] });
    await env.host.apply(tools.params, tools.bundle);
    const uses = moduleBundle('1.0.0', {
      name: 'app',
      probes: [
        { name: 'login', command: 'tools && app', shell: 'login' },
        { name: 'plain', command: 'tools', shell: 'nonLogin' },
      ],
    });
    const applied = await env.host.apply(uses.params, uses.bundle);
    expect(applied.probes).toEqual([
      { name: 'login', ok: true, exitCode: 0, output: 'tools 3.0.0\napp 1.0.0\n' },
      { name: 'plain', ok: true, exitCode: 0, output: 'tools 3.0.0\n' },
    ]);
  });

  it('keeps a rebootRequired version pending until the boot id changes, then probes it', async () => {
    using env = hostFixture();
    const kernelish = moduleBundle('1.0.0', { rebootRequired: true });
    const applied = await env.host.apply(kernelish.params, kernelish.bundle);
    expect(applied).toMatchObject({ state: 'pending', probes: [] });
    const report = moduleReporter(env.stateDir, () => env.boot.id);
    expect(report()).toMatchObject([{ name: 'resolver', state: 'pending', probes: [] }]);
    await env.host.settle();
    expect(report()).toMatchObject([{ state: 'pending' }]);
    env.boot.id = 'boot-2';
    await env.host.settle();
    expect(report()).toMatchObject([{ name: 'resolver', state: 'active', probes: [{ name: 'runs', ok: true }] }]);
    // The same version again in the new boot is already in effect: not pending again.
    expect(await env.host.apply(kernelish.params, kernelish.bundle)).toMatchObject({ changed: false, state: 'active' });
  });

  it('removes a module after checking its files; a drifted file is reported and refused unless drift is accepted', async () => {
    using env = hostFixture();
    const v1 = moduleBundle('1.0.0');
    const v2 = moduleBundle('1.1.0');
    await env.host.apply(v1.params, v1.bundle);
    await env.host.apply(v2.params, v2.bundle);
    writeFileSync(join(env.modules, 'resolver/1.0.0/etc/resolver.conf'), 'edited by hand\n');
    writeFileSync(join(env.modules, 'resolver/1.1.0/extra'), 'x');
    const before = snapshot(env.stateDir);
    const refused = await env.host.remove({ module: 'resolver', acceptDrift: false }).catch((err: unknown) => err as Error);
    expect(agentErrorCodeOf(refused)).toBe('MODULE_DRIFT');
    expect((refused as Error).message).toContain('1.0.0/etc/resolver.conf changed');
    expect((refused as Error).message).toContain('1.1.0/extra unexpected');
    expect(snapshot(env.stateDir)).toEqual(before);

    expect(await env.host.remove({ module: 'resolver', acceptDrift: true })).toEqual({
      module: 'resolver',
      removed: true,
      drift: [
        { version: '1.0.0', path: 'etc/resolver.conf', problem: 'changed' },
        { version: '1.1.0', path: 'extra', problem: 'unexpected' },
      ],
    });
    expect(existsSync(join(env.modules, 'resolver'))).toBe(false);
    expect(await env.host.remove({ module: 'resolver', acceptDrift: false })).toEqual({ module: 'resolver', removed: false, drift: [] });
  });

  it('removes an intact module without drift', async () => {
    using env = hostFixture();
    const v1 = moduleBundle('1.0.0');
    await env.host.apply(v1.params, v1.bundle);
    expect(await env.host.remove({ module: 'resolver', acceptDrift: false })).toEqual({ module: 'resolver', removed: true, drift: [] });
    expect(snapshot(env.modules)).toEqual({});
  });
});
