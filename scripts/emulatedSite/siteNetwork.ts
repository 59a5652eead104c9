import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runTool } from './hostTools.ts';

/**
 * The emulated site's network: namespace `<name>` holds the bridge (the provisioning LAN, where `bcd site` and the
 * VMs' taps sit); namespace `<name>-lan` holds the LAN's own DHCP server (dnsmasq), joined to the bridge by a veth
 * pair, as the site's existing DHCP server would be another machine. An uplink veth joins the site namespace to the
 * host's (a /30 of the same private block): the control plane (NATS, the API, the BMCs) listens on the host end, and
 * the site namespace routes the machines' traffic to it, as a site's router reaches its control plane. Nothing is
 * routed anywhere else: the host has a route to the bridge's subnet, no default route leads out of the namespaces.
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
  /** The host's end of the uplink: where the control plane and the BMCs listen for the site (10.<octet>.1.1). */
  hostIp: string;
  /** The host-side uplink interface (in the host's namespace; deleting the site namespace deletes it too). */
  uplink: string;
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
    hostIp: `10.${octet}.1.1`,
    uplink: `${name}h`,
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
    inNs(net.lanNetns, 'route', 'add', 'default', 'via', net.siteIp);
    // The uplink: host end 10.o.1.1/30, site end 10.o.1.2/30; the site namespace forwards between it and the bridge.
    ip('link', 'add', net.uplink, 'type', 'veth', 'peer', 'name', `${name}u`, 'netns', net.netns);
    ip('addr', 'add', `${net.hostIp}/30`, 'dev', net.uplink);
    ip('link', 'set', net.uplink, 'up');
    inNs(net.netns, 'addr', 'add', `10.${octet}.1.2/30`, 'dev', `${name}u`);
    inNs(net.netns, 'link', 'set', `${name}u`, 'up');
    runTool('ip', ['netns', 'exec', net.netns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    ip('route', 'add', `10.${octet}.0.0/${net.prefix}`, 'via', `10.${octet}.1.2`, 'dev', net.uplink);
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

/** Deletes both namespaces (and with them the bridge, veths, taps, the uplink and its route); missing ones are fine. */
export function destroySiteNetwork(net: Pick<SiteNetwork, 'netns' | 'lanNetns'> & { uplink?: string }): void {
  if (net.uplink) {
    try {
      ip('link', 'del', net.uplink);
    } catch {
      // Gone with the namespace already, or never made.
    }
  }
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
      'netns',
      'exec',
      net.lanNetns,
      'dnsmasq',
      '--keep-in-foreground',
      '--no-daemon',
      '--conf-file=/dev/null',
      '--no-resolv',
      '--no-hosts',
      '--port=0',
      `--interface=${net.name}v1`,
      '--bind-interfaces',
      `--dhcp-range=${net.range.first},${net.range.last},255.255.255.0,1h`,
      // The site namespace is the LAN's router: the control plane is reached through it.
      `--dhcp-option=option:router,${net.siteIp}`,
      `--dhcp-leasefile=${join(runDir, 'dnsmasq.leases')}`,
      '--pid-file=',
      '--log-dhcp',
      '--log-facility=-',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
}
