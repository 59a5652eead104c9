import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runTool } from './hostTools.ts';

/**
 * The emulated site's network: namespace `<name>` holds the bridge (the provisioning LAN, where `bcd site` and the
 * VMs' taps sit); namespace `<name>-lan` holds the LAN's own DHCP server (dnsmasq), joined to the bridge by a veth
 * pair, as the site's existing DHCP server would be another machine. Nothing is routed out of either namespace.
 */
export interface SiteNetwork {
  name: string;
  /** The namespace of the bridge, the taps and `bcd site`. */
  netns: string;
  lanNetns: string;
  bridge: string;
  /** `bcd site`'s address on the bridge (x.y.z.1), the LAN DHCP server's (x.y.z.2), the prefix length. */
  siteIp: string;
  lanDhcpIp: string;
  prefix: number;
  /** The range the LAN's DHCP server leases from. */
  range: { first: string; last: string };
}

const ip = (...args: string[]) => runTool('ip', args);
const inNs = (netns: string, ...args: string[]) => runTool('ip', ['-n', netns, ...args]);

/** Creates both namespaces, the bridge and the veth pair on subnet `10.<octet>.0.0/24` (octet 16-250). */
export function createSiteNetwork(name: string, octet: number): SiteNetwork {
  if (!/^emu[a-z0-9]{1,8}$/.test(name)) throw new RangeError(`site network name ${name} must be emu + up to 8 lower-case letters/digits`);
  const net: SiteNetwork = {
    name,
    netns: name,
    lanNetns: `${name}-lan`,
    bridge: `${name}br`,
    siteIp: `10.${octet}.0.1`,
    lanDhcpIp: `10.${octet}.0.2`,
    prefix: 24,
    range: { first: `10.${octet}.0.100`, last: `10.${octet}.0.199` },
  };
  try {
    ip('netns', 'add', net.netns);
    ip('netns', 'add', net.lanNetns);
    inNs(net.netns, 'link', 'set', 'lo', 'up');
    inNs(net.lanNetns, 'link', 'set', 'lo', 'up');
    inNs(net.netns, 'link', 'add', net.bridge, 'type', 'bridge');
    // No STP and no forwarding delay: a tap that joins must pass DHCP at once, or PXE ROMs time out.
    inNs(net.netns, 'link', 'set', net.bridge, 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0');
    inNs(net.netns, 'addr', 'add', `${net.siteIp}/${net.prefix}`, 'dev', net.bridge);
    inNs(net.netns, 'link', 'set', net.bridge, 'up');
    inNs(net.netns, 'link', 'add', `${name}v0`, 'type', 'veth', 'peer', 'name', `${name}v1`, 'netns', net.lanNetns);
    inNs(net.netns, 'link', 'set', `${name}v0`, 'master', net.bridge);
    inNs(net.netns, 'link', 'set', `${name}v0`, 'up');
    inNs(net.lanNetns, 'addr', 'add', `${net.lanDhcpIp}/${net.prefix}`, 'dev', `${name}v1`);
    inNs(net.lanNetns, 'link', 'set', `${name}v1`, 'up');
    return net;
  } catch (err) {
    destroySiteNetwork(net);
    throw err;
  }
}

/** Adds a tap for one VM's NIC to the bridge (QEMU opens it by name inside the namespace). */
export function addTap(net: SiteNetwork, tap: string): void {
  inNs(net.netns, 'tuntap', 'add', 'dev', tap, 'mode', 'tap');
  inNs(net.netns, 'link', 'set', tap, 'master', net.bridge);
  inNs(net.netns, 'link', 'set', tap, 'up');
}

/** Deletes both namespaces (and with them the bridge, veths and taps); missing ones are fine. */
export function destroySiteNetwork(net: Pick<SiteNetwork, 'netns' | 'lanNetns'>): void {
  for (const ns of [net.netns, net.lanNetns]) {
    try {
      ip('netns', 'del', ns);
    } catch {
      // Already gone (or never made): nothing to clean.
    }
  }
}

/**
 * The LAN's DHCP server: dnsmasq in DHCP-only mode (`--port=0`: no DNS) in the LAN namespace, leasing addresses and
 * nothing else, as an office router would; PXE is left to `bcd site`'s ProxyDHCP.
 */
export function startLanDhcp(net: SiteNetwork, runDir: string): ChildProcess {
  mkdirSync(runDir, { recursive: true });
  return spawn(
    'ip',
    [
      'netns', 'exec', net.lanNetns, 'dnsmasq',
      '--keep-in-foreground', '--no-daemon', '--conf-file=/dev/null', '--no-resolv', '--no-hosts', '--port=0',
      `--interface=${net.name}v1`, '--bind-interfaces',
      `--dhcp-range=${net.range.first},${net.range.last},255.255.255.0,1h`,
      `--dhcp-leasefile=${join(runDir, 'dnsmasq.leases')}`,
      '--pid-file=', '--log-dhcp', '--log-facility=-',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
}
