import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connectProvider, providerConformanceCases, runCommand, runConformance } from 'better-compute/sdk';
import type { ConformanceSubject, ProviderCommand, RunCommand } from 'better-compute/sdk';
import { libvirtProvider } from '../../plugins/libvirt/index.ts';
import { SYSTEM_URI, ensureLibvirtDaemon, type LibvirtDaemon } from './libvirt/daemon.ts';

// The real libvirtd (QEMU under TCG: no KVM here). Diskless 64 MiB domains: the firmware finds nothing to boot and
// idles, which is all the provider contract needs, and boots in about a second.
let daemon: LibvirtDaemon;
beforeAll(async () => {
  daemon = await ensureLibvirtDaemon();
}, 120_000);
afterAll(async () => {
  await daemon?.stop();
});

const runId = `libvirt-${process.pid}-${Date.now().toString(36)}`;
const config = { region: 'local', uri: SYSTEM_URI, flavours: [{ offerId: 'tiny', vcpus: 1, memoryMib: 64, diskGib: 1 }], images: { none: null } };
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
    const report = await runConformance(providerConformanceCases(), subject);
    expect(report.cases.filter((c) => !c.ok)).toEqual([]);
    expect(report.cases).toHaveLength(providerConformanceCases().length);
    const client = connectProvider(libvirtProvider, { config, token: subject.token, fetch: subject.fetch });
    expect((await client.listInstances()).filter((i) => i.clientToken.startsWith('bc-'))).toEqual([]);
  });
});
