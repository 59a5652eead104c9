import { networkInterfaces } from 'node:os';
import type { Logger } from '../../../services/platform/logger.ts';
import { AddressPool } from './addressPool.ts';
import type { PxeArms } from './pxeArms.ts';
import { startPxeDhcp, type PxeDhcpServer } from './proxyDhcp.ts';
import { startTftpServer, type TftpServer } from './tftpServer.ts';

/** Where Debian's `ipxe` package puts `undionly.kpxe` and `ipxe.efi`. */
export const DEBIAN_IPXE_DIR = '/usr/lib/ipxe';

/** `bcd site`'s network boot settings (`--pxe-interface`, `--pxe-address`, `--dhcp-pool`, `--tftp-root`). */
export interface SitePxeSettings {
  /** The provisioning network's interface; its first IPv4 address is the server address unless `address` is given. */
  interface?: string;
  address?: string;
  /** `first-last`: hand out addresses from this range too (sites without a DHCP server of their own). */
  dhcpPool?: { first: string; last: string; subnetMask?: string; router?: string };
  /** Folder served over TFTP; default Debian's iPXE binaries. */
  tftpRoot?: string;
  /** Ports overridable so tests run unprivileged on loopback. */
  ports?: { dhcp?: number; pxe?: number; client?: number; tftp?: number };
  broadcastAddress?: string;
}

export interface SiteBootPath {
  /** The address machines reach the site on (DHCP server id, TFTP next-server, HTTP host). */
  address: string;
  dhcp: PxeDhcpServer;
  tftp: TftpServer;
  close(): Promise<void>;
}

export class SiteBootPathError extends Error {
  override name = 'SiteBootPathError';
  readonly code = 'PXE_INTERFACE_UNUSABLE' as const;
}

/** The address of a `--pxe-interface`/`--pxe-address` pair: the given one, else the interface's first IPv4 address. */
export function pxeAddressOf(settings: Pick<SitePxeSettings, 'interface' | 'address'>): { address: string; prefix: number } {
  if (!settings.interface) {
    if (!settings.address) throw new SiteBootPathError('network boot needs --pxe-interface or --pxe-address');
    return { address: settings.address, prefix: 24 };
  }
  const ipv4 = (networkInterfaces()[settings.interface] ?? []).filter((a) => a.family === 'IPv4');
  if (ipv4.length === 0) throw new SiteBootPathError(`interface ${settings.interface} does not exist or has no IPv4 address`);
  const chosen = settings.address ? ipv4.find((a) => a.address === settings.address) : ipv4[0];
  if (!chosen) throw new SiteBootPathError(`${settings.address} is not an address of ${settings.interface}`);
  const prefix = Number(chosen.cidr?.split('/')[1] ?? 24);
  return { address: chosen.address, prefix };
}

const maskOf = (prefix: number) => [24, 16, 8, 0].map((s) => ((prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0) >>> s) & 255).join('.');

/**
 * The boot path of a site on a real network: DHCP (ProxyDHCP beside the LAN's own server by default; with `dhcpPool`
 * the network's DHCP server for armed machines) and TFTP of the iPXE binaries. Only MACs of nodes the control plane set
 * to boot PXE (`arms`) get an answer; the HTTP chain (per-machine script, ramdisk, images) is the boot server's.
 */
export async function startSiteBootPath(options: {
  settings: SitePxeSettings;
  arms: PxeArms;
  /** The script URL of the node's current boot; undefined (no boot ticket yet: the reset was not sent) gets no answer. */
  scriptUrl: (nodeId: string) => string | undefined;
  log: Logger;
}): Promise<SiteBootPath> {
  const { settings, arms, log } = options;
  const { address, prefix } = pxeAddressOf(settings);
  const pool = settings.dhcpPool
    ? new AddressPool({
        first: settings.dhcpPool.first,
        last: settings.dhcpPool.last,
        subnetMask: settings.dhcpPool.subnetMask ?? maskOf(prefix),
        ...(settings.dhcpPool.router ? { router: settings.dhcpPool.router } : {}),
      })
    : undefined;
  const tftp = await startTftpServer({
    root: settings.tftpRoot ?? DEBIAN_IPXE_DIR,
    address,
    ...(settings.ports?.tftp !== undefined ? { port: settings.ports.tftp } : {}),
    log,
  });
  let dhcp: PxeDhcpServer;
  try {
    dhcp = await startPxeDhcp({
      serverIp: address,
      // Armed and reset: before the reset the machine's own OS could ask with its NIC and learn the boot's URL.
      knownMac: (mac) => {
        const node = arms.nodeOf(mac);
        return node && options.scriptUrl(node.nodeId) !== undefined ? node : undefined;
      },
      scriptUrl: (node) => options.scriptUrl(node.nodeId) ?? '',
      ...(pool ? { pool } : {}),
      ...(settings.ports ? { ports: settings.ports } : {}),
      ...(settings.broadcastAddress ? { broadcastAddress: settings.broadcastAddress } : {}),
      log,
    });
  } catch (err) {
    await tftp.close();
    throw err;
  }
  log.info({ address, dhcp: dhcp.ports, tftp: tftp.port, mode: pool ? 'dhcp-server' : 'proxy' }, 'network boot path listening');
  return { address, dhcp, tftp, close: async () => void (await Promise.all([dhcp.close(), tftp.close()])) };
}
