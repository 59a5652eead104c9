import { describe, expect, it } from 'vitest';
import { BcdUsageError } from '../../daemon/bcdArgs.ts';
import { autoinstallSeedOf, bcdNodeArgsOf } from '../../daemon/simulator/autoinstall.ts';
import { buildIso9660 } from '../../plugins/sdk/iso9660.ts';

const node = { command: 'node', siteId: 'dc1', nodeId: 'n1', natsUrl: 'nats://10.0.0.1:4222', stateDir: '/var/lib/bcd' };

describe('bcdNodeArgsOf', () => {
  it.each([
    ['bcd node --site dc1 --node n1 --nats nats://10.0.0.1:4222 --state /var/lib/bcd --join-token bcj_t', { token: 'bcj_t', credsFile: undefined }],
    [
      'curtin in-target --target=/target -- /usr/local/bin/bcd node --site dc1 --node n1 --nats nats://10.0.0.1:4222 --state /var/lib/bcd --join-token bcj_t',
      { token: 'bcj_t', credsFile: undefined },
    ],
    [
      'curtin in-target -t /target -- BC_JOIN_TOKEN=\'bcj_t\' bcd node --site dc1 --node n1 --nats "nats://10.0.0.1:4222" --state /var/lib/bcd --join-creds http://h/join.creds',
      { token: 'bcj_t', credsFile: 'http://h/join.creds' },
    ],
  ])('reads the bcd node invocation of %s', (line, join) => {
    expect(bcdNodeArgsOf(line)).toEqual({ ...node, join });
  });

  it('reads an argv list as subiquity runs it, without a shell', () => {
    expect(bcdNodeArgsOf(['bcd', 'node', '--site', 'dc1', '--node', 'n1', '--nats', 'nats://10.0.0.1:4222', '--state', '/var/lib/bcd'])).toEqual({
      ...node,
      join: { token: undefined, credsFile: undefined },
    });
  });

  it.each([
    "echo 'hello' > /target/etc/motd",
    'curtin in-target --target=/target -- systemctl enable bcd-node',
    'bcd site --site dc1 --nats n --state s',
    'bcd node --site dc1 --node n1 --nats n --state s && reboot',
  ])('leaves %s to the other late-commands', (line) => {
    expect(bcdNodeArgsOf(line)).toBeUndefined();
  });

  it('fails a bcd node line with bad arguments as bcd would (exit 2)', () => {
    expect(() => bcdNodeArgsOf('bcd node --site dc1 --nats n --state s')).toThrow(BcdUsageError);
  });
});

describe('autoinstallSeedOf', () => {
  const iso = (userData: string) => buildIso9660({ volumeId: 'cidata', files: [{ name: 'user-data', content: userData }] });

  it('reads late-commands and authorized keys from the autoinstall section', () => {
    const seed = autoinstallSeedOf(
      iso('#cloud-config\nautoinstall:\n  version: 1\n  ssh:\n    authorized-keys: [ssh-ed25519 AAAA k]\n  late-commands:\n    - echo hi\n    - [bcd, node]\n'),
    );
    expect(seed).toMatchObject({ lateCommands: ['echo hi', ['bcd', 'node']], sshKeys: ['ssh-ed25519 AAAA k'] });
    expect(seed!.isoSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('finds no seed on a CD without autoinstall (the installer waits at the console)', () => {
    expect(autoinstallSeedOf(iso('#cloud-config\nhostname: x\n'))).toBeUndefined();
    expect(autoinstallSeedOf(buildIso9660({ volumeId: 'UBUNTU', files: [{ name: 'README', content: 'x' }] }))).toBeUndefined();
  });

  it.each([
    ['not an ISO', new Uint8Array(64 * 1024)],
    ['broken YAML', iso('#cloud-config\nautoinstall: [\n')],
    ['late-commands of the wrong shape', iso('#cloud-config\nautoinstall:\n  late-commands: { a: 1 }\n')],
  ])('fails the boot on %s', (_what, bytes) => {
    expect(() => autoinstallSeedOf(bytes)).toThrow(expect.objectContaining({ code: 'SEED_INVALID' }));
  });
});
