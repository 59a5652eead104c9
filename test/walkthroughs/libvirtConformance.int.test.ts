import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connectProvider, providerConformanceCases, runCommand, runConformance } from 'better-compute/sdk';
import type { ConformanceSubject, ProviderCommand, RunCommand } from 'better-compute/sdk';
import { domainUuidOf, libvirtProvider } from '../../plugins/libvirt/index.ts';
import { SYSTEM_URI, ensureLibvirtDaemon, type LibvirtDaemon } from './libvirt/daemon.ts';

// The real libvirtd (QEMU under TCG: no KVM here). Diskless 64 MiB domains: the firmware finds nothing to boot and
// idles, which is all the provider contract needs, and boots in about a second.
const virsh = (...args: string[]) => promisify(execFile)('virsh', ['--quiet', '--connect', SYSTEM_URI, ...args]);
const runId = `libvirt-${process.pid}-${Date.now().toString(36)}`;
// A directory storage pool of the run's own for the NoCloud seed volumes.
const seedPool = `bc-seeds-${runId}`;
let seedDir: string;
let daemon: LibvirtDaemon;
beforeAll(async () => {
  daemon = await ensureLibvirtDaemon();
  seedDir = await mkdtemp(join(tmpdir(), 'bc-libvirt-seeds-'));
  await chmod(seedDir, 0o755);
  await virsh('pool-define-as', seedPool, 'dir', '--target', seedDir);
  await virsh('pool-start', seedPool);
}, 120_000);
afterAll(async () => {
  await virsh('pool-destroy', seedPool).catch(() => undefined);
  await virsh('pool-undefine', seedPool).catch(() => undefined);
  if (seedDir) await rm(seedDir, { recursive: true, force: true });
  await daemon?.stop();
});

const config = { region: 'local', uri: SYSTEM_URI, seedPool, flavours: [{ offerId: 'tiny', vcpus: 1, memoryMib: 64, diskGib: 1 }], images: { none: null } };
const spec = (clientToken: string) => ({ clientToken, name: 'web', offerId: 'tiny', image: 'none', sshKeys: [] });

/** The real runner, remembering every virsh command line it ran. */
function recordingRun(): { run: RunCommand; commands: ProviderCommand[] } {
  const commands: ProviderCommand[] = [];
  return {
    commands,
    run: (command, signal) => {
      commands.push(command);
      return runCommand(command, signal);
    },
  };
}

describe('libvirt provider against the real libvirtd', () => {
  test('passes the conformance suite', { timeout: 600_000 }, async () => {
    const subject: ConformanceSubject = {
      provider: libvirtProvider,
      config,
      // A local socket's permissions are libvirt's credential: the token is unused, a refused account is a bad socket.
      token: 'libvirt-local-socket-needs-no-token',
      wrongConfig: { ...config, uri: 'qemu+unix:///system?socket=/nonexistent/libvirt-sock' },
      fetch: () => Promise.reject(new Error('the libvirt provider must not use fetch')),
      image: 'none',
      unpaged: true,
      pagedInstanceCount: 3,
      pollIntervalMs: 200,
      timeoutMs: 60_000,
      runId,
    };
    // The host may have other domains (a developer's): the run must leave exactly the ones it found.
    const client = connectProvider(libvirtProvider, { config, token: subject.token, fetch: subject.fetch });
    const before = (await client.listInstances()).map((i) => i.providerInstanceId).sort();
    const report = await runConformance(providerConformanceCases(), subject);
    expect(report.cases.filter((c) => !c.ok)).toEqual([]);
    expect(report.cases).toHaveLength(providerConformanceCases().length);
    expect((await client.listInstances()).map((i) => i.providerInstanceId).sort()).toEqual(before);
    // Every create carried the conformance SSH key, so each made a seed volume; every delete removed its own.
    expect(await readdir(seedDir)).toEqual([]);
  });
});

describe('libvirt provider details', () => {
  test('boots from an account image as a transient disk: QEMU writes to an overlay beside it, dropped at power-off', { timeout: 120_000 }, async () => {
    // libvirt hands the image to the unprivileged libvirt-qemu user, so its folder must be one that user can enter.
    const dir = await mkdtemp(join(tmpdir(), 'bc-libvirt-image-'));
    await chmod(dir, 0o755);
    const image = join(dir, 'base.qcow2');
    await promisify(execFile)('qemu-img', ['create', '-q', '-f', 'qcow2', image, '16M']);
    const recorder = recordingRun();
    const withImage = { ...config, images: { base: image } };
    const client = connectProvider(libvirtProvider, { config: withImage, token: 'unused', fetch: globalThis.fetch, run: recorder.run });
    const token = `bc-${runId}-disk`;
    const uuid = domainUuidOf(token);
    try {
      const userData = '#!/bin/sh\necho hello from the tenant\n';
      const created = await client.createInstance({ ...spec(token), image: 'base', sshKeys: ['ssh-ed25519 AAAAtenantkey tenant'], userData });
      expect(created).toMatchObject({ providerInstanceId: domainUuidOf(token), clientToken: token, state: 'running', addresses: [] });
      expect((await readdir(dir)).sort()).toEqual(['base.qcow2', `base.qcow2.TRANSIENT-web-${domainUuidOf(token).slice(0, 8)}`]);
      await client.stopInstance(created.providerInstanceId);
      expect(await client.getInstance(created.providerInstanceId)).toMatchObject({ state: 'stopped', message: 'libvirt state shut off (destroyed)' });
      expect(await readdir(dir)).toEqual(['base.qcow2']);
      // The define (XML on stdin), the seed volume made and filled, the start; every other call was a read.
      const mutating = recorder.commands.filter((c) => c.mutating).map((c) => c.args[3]);
      expect(mutating).toEqual(['define', 'vol-create-as', 'vol-upload', 'start', 'destroy']);
      const xml = String(recorder.commands.find((c) => c.args.includes('define'))?.input);
      expect(xml).toContain(`<source file='${image}'/><target dev='vda' bus='virtio'/><transient/>`);
      expect(xml).toContain(`<source pool='${seedPool}' volume='bc-seed-${uuid}.iso'/>`);
      // The seed as libvirt stored it: a `cidata` ISO with the keys in meta-data and the tenant's user data unchanged.
      const seed = await readFile(join(seedDir, `bc-seed-${uuid}.iso`));
      expect(seed.subarray(16 * 2048 + 40, 16 * 2048 + 46).toString('ascii')).toBe('cidata');
      expect(seed.toString('latin1')).toContain('public-keys:\n  - "ssh-ed25519 AAAAtenantkey tenant"');
      expect(seed.toString('latin1')).toContain(userData);
    } finally {
      await client.deleteInstance(uuid);
      await rm(dir, { recursive: true, force: true });
    }
    await expect(client.getInstance(uuid)).rejects.toMatchObject({ kind: 'not-found' });
    expect(await readdir(seedDir)).toEqual([]);
  });

  test('refuses an unknown flavour or image before calling libvirt, and a host without the daemon is a configuration error', async () => {
    const recorder = recordingRun();
    const client = connectProvider(libvirtProvider, { config, token: 'unused', fetch: globalThis.fetch, run: recorder.run });
    await expect(client.createInstance({ ...spec('bc-no-flavour'), offerId: 'huge' })).rejects.toMatchObject({ kind: 'rejected' });
    await expect(client.createInstance({ ...spec('bc-no-image'), image: 'debian-12' })).rejects.toMatchObject({ kind: 'rejected' });
    const noPool = connectProvider(libvirtProvider, {
      config: { ...config, seedPool: undefined },
      token: 'unused',
      fetch: globalThis.fetch,
      run: recorder.run,
    });
    await expect(noPool.createInstance({ ...spec('bc-no-pool'), sshKeys: ['ssh-ed25519 AAAA k'] })).rejects.toMatchObject({ kind: 'configuration' });
    expect(recorder.commands).toEqual([]);
    await expect(client.getInstance('not-a-uuid')).rejects.toMatchObject({ kind: 'not-found' });
    await expect(client.findByClientToken('bc-never-created')).resolves.toBeNull();
    const elsewhere = connectProvider(libvirtProvider, {
      config: { ...config, uri: 'qemu+unix:///system?socket=/nonexistent/libvirt-sock' },
      token: 'unused',
      fetch: globalThis.fetch,
    });
    const error = await elsewhere.listInstances().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'configuration', code: 'PROVIDER_CONFIGURATION' });
    expect((error as Error).message).toContain("Failed to connect socket to '/nonexistent/libvirt-sock'");
    // Flavours larger than the host (virsh nodeinfo) are not offered.
    const offers = await connectProvider(libvirtProvider, {
      config: { ...config, flavours: [...config.flavours, { offerId: 'too-big', vcpus: 64, memoryMib: 1_048_576, diskGib: 1 }] },
      token: 'unused',
      fetch: globalThis.fetch,
    }).listOffers();
    expect(offers.map((o) => o.offerId)).toEqual(['tiny']);
  });
});
