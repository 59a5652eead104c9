import { describe, expect, it } from 'vitest';
import { BcdUsageError, parseBcdArgs } from '../../daemon/bcdArgs.ts';
import { parseByteRange } from '../../daemon/site/byteRange.ts';
import { ramdiskIpxeScript, ramdiskParamsOf } from '../../daemon/site/ipxeScript.ts';
import { ramdiskAgentId, siteAgentId } from '../../daemon/agent/identity.ts';

const usage = (argv: string[]) => {
  try {
    parseBcdArgs(argv);
  } catch (err) {
    return err instanceof BcdUsageError ? err.code : err;
  }
  throw new Error('expected a usage error');
};

describe('parseBcdArgs', () => {
  it('parses bcd site with defaults', () => {
    expect(parseBcdArgs(['site', '--site', 'dc1', '--nats', 'nats://x:4222', '--state', '/var/lib/bcd'])).toEqual({
      command: 'site',
      siteId: 'dc1',
      natsUrl: 'nats://x:4222',
      stateDir: '/var/lib/bcd',
      httpPort: 0,
      httpHost: '127.0.0.1',
      advertiseUrl: undefined,
      join: { token: undefined, credsFile: undefined },
    });
  });

  it('reads BMC credentials from a file only when bcd site is given --lab-credentials-file', () => {
    const base = ['--site', 'dc1', '--nats', 'n', '--state', 's'];
    expect(parseBcdArgs(['site', ...base])).not.toHaveProperty('labCredentialsFile');
    expect(parseBcdArgs(['site', ...base, '--lab-credentials-file', '/etc/bc/creds.json'])).toMatchObject({ labCredentialsFile: '/etc/bc/creds.json' });
    expect(usage(['ramdisk', ...base, '--node', 'n1', '--disk', '/dev/sda', '--lab-credentials-file', '/x'])).toBe('USAGE');
    expect(usage(['node', ...base, '--node', 'n1', '--lab-credentials-file', '/x'])).toBe('USAGE');
  });

  it('takes a join token from --join-token or BC_JOIN_TOKEN, and join credentials alone only for a restart of site or node', () => {
    const base = ['site', '--site', 'dc1', '--nats', 'n', '--state', 's'];
    expect(parseBcdArgs([...base, '--join-token', 'bcj_a', '--join-creds', '/etc/bc/join.creds']).join).toEqual({
      token: 'bcj_a',
      credsFile: '/etc/bc/join.creds',
    });
    expect(parseBcdArgs(base, { BC_JOIN_TOKEN: 'bcj_env', BC_JOIN_CREDS: '/j' }).join).toEqual({ token: 'bcj_env', credsFile: '/j' });
    // A restart keeps its environment: the credential is unused once the membership is kept (connectLongLivedAgent).
    expect(parseBcdArgs([...base, '--join-creds', '/j']).join).toEqual({ token: undefined, credsFile: '/j' });
    expect(parseBcdArgs(['node', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's', '--join-creds', '/j']).join.credsFile).toBe('/j');
    expect(() => parseBcdArgs(['ramdisk', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's', '--all-disks', '--join-creds', '/j'])).toThrow(
      BcdUsageError,
    );
  });

  it('parses bcd site network boot flags: proxy DHCP by default, a pool only when given, all refused elsewhere', () => {
    const base = ['site', '--site', 'dc1', '--nats', 'n', '--state', 's'];
    expect(parseBcdArgs([...base, '--pxe-interface', 'br0', '--ramdisk-dir', '/srv/ramdisk'])).toMatchObject({
      pxe: { interface: 'br0' },
      ramdiskDir: '/srv/ramdisk',
    });
    expect(parseBcdArgs([...base, '--pxe-interface', 'br0'])).not.toHaveProperty('pxe.dhcpPool');
    // The boot HTTP server then listens on the PXE address, not loopback, unless --http-host says where.
    expect(parseBcdArgs([...base, '--pxe-interface', 'br0'])).not.toHaveProperty('httpHost');
    expect(parseBcdArgs([...base, '--pxe-interface', 'br0', '--http-host', '0.0.0.0'])).toMatchObject({ httpHost: '0.0.0.0' });
    expect(
      parseBcdArgs([...base, '--pxe-address', '10.1.0.1', '--dhcp-pool', '10.1.0.100-10.1.0.199', '--dhcp-router', '10.1.0.1', '--tftp-root', '/t']),
    ).toMatchObject({
      pxe: { address: '10.1.0.1', dhcpPool: { first: '10.1.0.100', last: '10.1.0.199', router: '10.1.0.1' }, tftpRoot: '/t' },
    });
    expect(parseBcdArgs(base)).not.toHaveProperty('pxe');
    expect(parseBcdArgs([...base, '--ramdisk-args', 'console=ttyS0  bc.ddbench=64'])).toMatchObject({ ramdiskArgs: ['console=ttyS0', 'bc.ddbench=64'] });
    expect(usage([...base, '--ramdisk-args', 'a=b;shell'])).toBe('USAGE');
    expect(usage([...base, '--dhcp-pool', '10.1.0.100-10.1.0.199'])).toBe('USAGE');
    expect(usage([...base, '--pxe-interface', 'br0', '--dhcp-pool', '10.1.0.100'])).toBe('USAGE');
    expect(usage([...base, '--pxe-interface', 'br0', '--dhcp-pool', '10.1.0.100-x'])).toBe('USAGE');
    expect(usage([...base, '--pxe-address', '10.1.0.300'])).toBe('USAGE');
    expect(usage([...base, '--pxe-interface', 'br0', '--dhcp-router', '10.1.0.1'])).toBe('USAGE');
    expect(usage(['ramdisk', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's', '--disk', '/dev/vda', '--pxe-interface', 'br0'])).toBe('USAGE');
    expect(usage(['node', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's', '--ramdisk-dir', '/r'])).toBe('USAGE');
  });

  it('parses bcd ramdisk with several disks', () => {
    expect(
      parseBcdArgs(['ramdisk', '--site', 'dc1', '--node', 'r1-n1', '--nats', 'nats://x', '--state', '/run/bcd', '--disk', '/dev/sda', '--disk', '/dev/sdb']),
    ).toMatchObject({
      command: 'ramdisk',
      nodeId: 'r1-n1',
      disks: ['/dev/sda', '/dev/sdb'],
    });
  });

  it('parses bcd ramdisk --all-disks as discovering every disk, and refuses it beside --disk', () => {
    const base = ['ramdisk', '--site', 'dc1', '--node', 'r1-n1', '--nats', 'nats://x', '--state', '/run/bcd'];
    expect(parseBcdArgs([...base, '--all-disks'])).toMatchObject({ command: 'ramdisk', disks: 'discover' });
    expect(usage([...base, '--all-disks', '--disk', '/dev/sda'])).toBe('USAGE');
    expect(usage(['site', '--site', 'dc1', '--nats', 'n', '--state', 's', '--all-disks'])).toBe('USAGE');
  });

  it('parses bcd node with a join token and a join credential URL', () => {
    expect(
      parseBcdArgs([
        'node',
        '--site',
        'dc1',
        '--node',
        'r1-n1',
        '--nats',
        'nats://x',
        '--state',
        '/var/lib/bcd',
        '--join-token',
        'bcj_t',
        '--join-creds',
        'http://10.0.0.1:8080/join.creds',
      ]),
    ).toEqual({
      command: 'node',
      siteId: 'dc1',
      nodeId: 'r1-n1',
      natsUrl: 'nats://x',
      stateDir: '/var/lib/bcd',
      join: { token: 'bcj_t', credsFile: 'http://10.0.0.1:8080/join.creds' },
    });
  });

  it('parses bcd node without a token: a restarted host resumes from its state directory', () => {
    expect(parseBcdArgs(['node', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's']).join).toEqual({ token: undefined, credsFile: undefined });
    expect(parseBcdArgs(['node', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's'], { BC_JOIN_TOKEN: 'bcj_env' }).join.token).toBe('bcj_env');
  });

  it('parses bcd node --plugins with its privileged list, and refuses either flag anywhere else or the list alone', () => {
    const node = ['node', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's'];
    expect(parseBcdArgs([...node, '--plugins', '/etc/bcd/plugins.d', '--privileged-plugin', 'crun', '--privileged-plugin', 'qemu'])).toMatchObject({
      plugins: { folder: '/etc/bcd/plugins.d', privileged: ['crun', 'qemu'] },
    });
    expect(parseBcdArgs(node)).not.toHaveProperty('plugins');
    expect(usage([...node, '--privileged-plugin', 'crun'])).toBe('USAGE');
    expect(usage(['site', '--site', 'dc1', '--nats', 'n', '--state', 's', '--plugins', '/p'])).toBe('USAGE');
  });

  it('parses bcd site --serial-console per machine, and refuses a malformed, repeated or misplaced one', () => {
    const site = ['site', '--site', 'dc1', '--nats', 'n', '--state', 's'];
    expect(parseBcdArgs([...site, '--serial-console', 'm1=/run/vm/m1/serial.log', '--serial-console', 'm2=/run/vm/m2/serial.log'])).toMatchObject({
      serialConsoles: { m1: '/run/vm/m1/serial.log', m2: '/run/vm/m2/serial.log' },
    });
    expect(parseBcdArgs(site)).not.toHaveProperty('serialConsoles');
    expect(usage([...site, '--serial-console', 'm1'])).toBe('USAGE');
    expect(usage([...site, '--serial-console', 'm1=relative/serial.log'])).toBe('USAGE');
    expect(usage([...site, '--serial-console', 'M1 bad=/x'])).toBe('USAGE');
    expect(usage([...site, '--serial-console', 'm1=/a', '--serial-console', 'm1=/b'])).toBe('USAGE');
    expect(usage(['node', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's', '--serial-console', 'n1=/x'])).toBe('USAGE');
  });

  it('parses bcd node --site-url, where module bundles are fetched from first', () => {
    const node = ['node', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's'];
    expect(parseBcdArgs([...node, '--site-url', 'http://10.0.0.1:8080'])).toMatchObject({ command: 'node', siteUrl: 'http://10.0.0.1:8080' });
    expect(parseBcdArgs(node)).not.toHaveProperty('siteUrl');
  });

  it.each([
    [['node', '--site', 'dc1', '--nats', 'n', '--state', 's']],
    [['node', '--site', 'dc1', '--node', 'n1', '--nats', 'n']],
    [['node', '--site', 'dc1', '--node', 'N.1', '--nats', 'n', '--state', 's']],
    [['node', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's', '--disk', '/dev/sda']],
    [['node', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's', '--http-port', '80']],
  ])('rejects bcd node %j with a usage error', (argv) => {
    expect(usage(argv)).toBe('USAGE');
  });

  it.each([
    [[]],
    [['serve']],
    [['site', '--nats', 'n', '--state', 's']],
    [['site', '--site', 'DC.1', '--nats', 'n', '--state', 's']],
    [['site', '--site', 'dc1', '--nats', 'n', '--state', 's', '--http-port', 'http']],
    [['site', '--site', 'dc1', '--nats', 'n', '--state', 's', '--bogus']],
    [['ramdisk', '--site', 'dc1', '--node', 'n1', '--nats', 'n', '--state', 's']],
  ])('rejects %j with a usage error', (argv) => {
    expect(usage(argv)).toBe('USAGE');
  });
});

describe('parseByteRange', () => {
  it.each([
    ['bytes=0-9', 100, { start: 0, end: 9 }],
    ['bytes=90-', 100, { start: 90, end: 99 }],
    ['bytes=-10', 100, { start: 90, end: 99 }],
    ['bytes=-500', 100, { start: 0, end: 99 }],
    ['bytes=50-500', 100, { start: 50, end: 99 }],
    ['bytes=100-', 100, 'unsatisfiable'],
    ['bytes=9-3', 100, 'unsatisfiable'],
    ['bytes=0-1,5-6', 100, undefined],
    ['items=0-1', 100, undefined],
    [undefined, 100, undefined],
  ])('parses %s of %d bytes', (header, size, expected) => {
    expect(parseByteRange(header, size)).toEqual(expected);
  });
});

describe('agent ids and boot scripts', () => {
  it('names agents by the agreed conventions', () => {
    expect(siteAgentId('dc1')).toBe('site-dc1');
    expect(ramdiskAgentId('r1-n1', 'Ab_-9xYzQQQ')).toBe('ramdisk-r1-n1-ab009xyz');
  });

  it('ramdiskParamsOf reads back what ramdiskIpxeScript put on the kernel line', () => {
    const script = ramdiskIpxeScript({ siteId: 'dc1', nodeId: 'n1', natsUrl: 'nats://10.0.0.1:4222', baseUrl: 'http://10.0.0.1:8080' });
    expect(script.startsWith('#!ipxe\n')).toBe(true);
    expect(ramdiskParamsOf(script)).toEqual({ site: 'dc1', node: 'n1', nats: 'nats://10.0.0.1:4222', boot: 'http://10.0.0.1:8080' });
  });

  it('a boot script carries the join token of its boot and where the join credential is', () => {
    const script = ramdiskIpxeScript({
      siteId: 'dc1',
      nodeId: 'n1',
      natsUrl: 'nats://h',
      baseUrl: 'http://h:1',
      joinToken: 'bcj_jt-x_s',
      joinCredsUrl: 'http://h:1/join.creds',
    });
    expect(ramdiskParamsOf(script)).toMatchObject({ join: 'bcj_jt-x_s', joincreds: 'http://h:1/join.creds' });
  });
});
