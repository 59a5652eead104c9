import { isIPv4 } from 'node:net';
import { isAbsolute } from 'node:path';
import { parseArgs } from 'node:util';
import type { SitePxeSettings } from './site/pxe/siteBootPath.ts';

export const bcdUsage = `usage:
  bcd site    --site <siteId> --nats <url> --state <dir> [--http-port <port>] [--http-host <host>] [--advertise-url <url>] [--lab-credentials-file <file>]
              [--serial-console <nodeId>=<file>...] [pxe] [join]
              (first start: --join-token; later starts resume from the membership kept in --state; --serial-console: a file
               the machine's serial console is written to (a BMC's SOL capture, QEMU's -serial file:), followed onto its log)
  bcd ramdisk --site <siteId> --node <nodeId> --nats <url> --state <dir> (--disk <path> [--disk <path>...] | --all-disks) [--site-url <url>] [join]
  bcd node    --site <siteId> --node <nodeId> --nats <url> --state <dir> [--site-url <url>] [--plugins <dir> [--privileged-plugin <id>...]] [join]
              (first start: --join-token; later starts resume from --state; --plugins: the bcx plugins folder, see docs/bcx.md;
               --site-url: the site agent's HTTP base URL, whose verified cache module bundles come from first)
pxe: [--pxe-interface <if>] [--pxe-address <ip>] [--dhcp-pool <first>-<last> [--dhcp-router <ip>]] [--tftp-root <dir>] [--ramdisk-dir <dir>] [--ramdisk-args '<kernel args>']
  (ProxyDHCP beside the LAN's DHCP server; --dhcp-pool hands out addresses too. Only machines set to boot PXE are answered.)
join: [--join-token <token> (or env BC_JOIN_TOKEN)] [--join-creds <file> (or env BC_JOIN_CREDS; broker mode; bcd node also takes an http(s) URL)]
BMC credentials are granted from the control plane's sealed secrets; --lab-credentials-file (LAB ONLY) reads plaintext
{ "secret:<id>": { "username", "password" } } from a file on the site instead.`;

/** How an agent joins: with a single-use token (and, under broker permissions, the public join credential file). */
export interface BcdJoin {
  token: string | undefined;
  credsFile: string | undefined;
}

export type BcdArgs =
  | {
      command: 'site';
      siteId: string;
      natsUrl: string;
      stateDir: string;
      httpPort: number;
      httpHost?: string;
      advertiseUrl: string | undefined;
      labCredentialsFile?: string;
      pxe?: SitePxeSettings;
      ramdiskDir?: string;
      ramdiskArgs?: string[];
      /** Machines whose serial console is written to a file (node id → absolute path). */
      serialConsoles?: Record<string, string>;
      join: BcdJoin;
    }
  | {
      command: 'ramdisk';
      siteId: string;
      nodeId: string;
      natsUrl: string;
      stateDir: string;
      disks: string[] | 'discover';
      siteUrl: string | undefined;
      join: BcdJoin;
    }
  | {
      command: 'node';
      siteId: string;
      nodeId: string;
      natsUrl: string;
      stateDir: string;
      /** The bcx plugins folder, and the plugins in it that run unsandboxed as root. */
      plugins?: { folder: string; privileged: string[] };
      /** The site agent's HTTP base URL: module bundles are fetched from its verified cache first. */
      siteUrl?: string;
      join: BcdJoin;
    };

export class BcdUsageError extends Error {
  override name = 'BcdUsageError';
  readonly code = 'USAGE' as const;
}

const ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new BcdUsageError(`--${name} is required`);
  return value;
}

function id(values: Record<string, unknown>, name: string): string {
  const value = required(values, name);
  // Ids become subject tokens and consumer names: anything else would address the wrong subjects.
  if (!ID.test(value)) throw new BcdUsageError(`--${name} must match ${ID.source}`);
  return value;
}

/** Parses `bcd <site|ramdisk|node> ...` (argv without node and script); throws BcdUsageError with a one-line reason. */
export function parseBcdArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): BcdArgs {
  const [command, ...rest] = argv;
  if (command !== 'site' && command !== 'ramdisk' && command !== 'node')
    throw new BcdUsageError(command ? `unknown command ${command}` : 'a command is required');
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args: [...rest],
      strict: true,
      allowPositionals: false,
      options: {
        site: { type: 'string' },
        node: { type: 'string' },
        nats: { type: 'string' },
        state: { type: 'string' },
        disk: { type: 'string', multiple: true },
        'all-disks': { type: 'boolean' },
        'http-port': { type: 'string' },
        'http-host': { type: 'string' },
        'advertise-url': { type: 'string' },
        'lab-credentials-file': { type: 'string' },
        'site-url': { type: 'string' },
        'join-token': { type: 'string' },
        'join-creds': { type: 'string' },
        'pxe-interface': { type: 'string' },
        'pxe-address': { type: 'string' },
        'dhcp-pool': { type: 'string' },
        'dhcp-router': { type: 'string' },
        'tftp-root': { type: 'string' },
        'ramdisk-dir': { type: 'string' },
        'ramdisk-args': { type: 'string' },
        plugins: { type: 'string' },
        'privileged-plugin': { type: 'string', multiple: true },
        'serial-console': { type: 'string', multiple: true },
      },
    }));
  } catch (cause) {
    throw new BcdUsageError((cause as Error).message, { cause });
  }
  const natsUrl = required(values, 'nats');
  // The environment keeps the token off the command line, where `ps` would show it to every user of the host.
  const join: BcdJoin = {
    token: (values['join-token'] as string | undefined) ?? (env.BC_JOIN_TOKEN || undefined),
    credsFile: (values['join-creds'] as string | undefined) ?? (env.BC_JOIN_CREDS || undefined),
  };
  // bcd site and bcd node resume a kept membership without a token (the join credential is then unused); a ramdisk
  // lives for one boot and always joins.
  if (command === 'ramdisk' && join.credsFile && !join.token) throw new BcdUsageError('--join-creds needs a join token (--join-token or BC_JOIN_TOKEN)');
  const stateDir = required(values, 'state');
  if (command !== 'node' && (values.plugins !== undefined || values['privileged-plugin'] !== undefined))
    throw new BcdUsageError('--plugins and --privileged-plugin are options of bcd node');
  if (command !== 'site' && values['serial-console'] !== undefined) throw new BcdUsageError('--serial-console is an option of bcd site');
  if (command === 'site') {
    if (values.node !== undefined || values.disk !== undefined || values['all-disks'] !== undefined || values['site-url'] !== undefined) {
      throw new BcdUsageError('--node, --disk, --all-disks and --site-url are for bcd ramdisk and bcd node');
    }
    const port = Number(values['http-port'] ?? '0');
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new BcdUsageError('--http-port must be a port number');
    const pxe = pxeOptions(values);
    // With network boot the HTTP server listens on the provisioning network's address unless told otherwise.
    const httpHost = (values['http-host'] as string | undefined) ?? (pxe.pxe ? undefined : '127.0.0.1');
    return {
      command,
      siteId: id(values, 'site'),
      natsUrl,
      stateDir,
      httpPort: port,
      ...(httpHost ? { httpHost } : {}),
      advertiseUrl: values['advertise-url'] as string | undefined,
      ...(values['lab-credentials-file'] ? { labCredentialsFile: values['lab-credentials-file'] as string } : {}),
      ...pxe,
      ...serialConsolesOf(values['serial-console'] as string[] | undefined),
      join,
    };
  }
  const pxeOnly = pxeFlags.filter((name) => values[name] !== undefined);
  if (pxeOnly.length > 0) throw new BcdUsageError(`--${pxeOnly[0]} is an option of bcd site`);
  if (command === 'node') {
    const siteOnly = ['disk', 'all-disks', 'http-port', 'http-host', 'advertise-url', 'lab-credentials-file'].filter((name) => values[name] !== undefined);
    if (siteOnly.length > 0) throw new BcdUsageError(`--${siteOnly[0]} is not an option of bcd node`);
    const privileged = (values['privileged-plugin'] as string[] | undefined) ?? [];
    if (privileged.length > 0 && values.plugins === undefined) throw new BcdUsageError('--privileged-plugin needs --plugins');
    const plugins = values.plugins === undefined ? {} : { plugins: { folder: values.plugins as string, privileged } };
    const siteUrl = values['site-url'] === undefined ? {} : { siteUrl: values['site-url'] as string };
    return { command, siteId: id(values, 'site'), nodeId: id(values, 'node'), natsUrl, stateDir, ...plugins, ...siteUrl, join };
  }
  if (values['lab-credentials-file'] !== undefined) throw new BcdUsageError('--lab-credentials-file is an option of bcd site');
  const named = (values.disk as string[] | undefined) ?? [];
  // Every disk of the machine is wiped: taking them all must be asked for, never a default of a missing --disk.
  if (named.length > 0 && values['all-disks']) throw new BcdUsageError('give --disk or --all-disks, not both');
  if (named.length === 0 && !values['all-disks']) throw new BcdUsageError('at least one --disk (or --all-disks) is required');
  const disks = named.length > 0 ? named : 'discover';
  const siteUrl = values['site-url'] as string | undefined;
  return { command, siteId: id(values, 'site'), nodeId: id(values, 'node'), natsUrl, stateDir, disks, siteUrl, join };
}

/** `--serial-console <nodeId>=<file>`, repeatable: one file per machine, each machine once. */
function serialConsolesOf(given: readonly string[] | undefined): { serialConsoles?: Record<string, string> } {
  if (!given?.length) return {};
  const serialConsoles: Record<string, string> = {};
  for (const entry of given) {
    const at = entry.indexOf('=');
    const nodeId = entry.slice(0, at);
    const path = entry.slice(at + 1);
    if (at < 0 || !ID.test(nodeId) || !isAbsolute(path))
      throw new BcdUsageError(`--serial-console ${JSON.stringify(entry)} must be <nodeId>=<absolute file path>`);
    if (nodeId in serialConsoles) throw new BcdUsageError(`--serial-console names ${nodeId} twice`);
    serialConsoles[nodeId] = path;
  }
  return { serialConsoles };
}

const pxeFlags = ['pxe-interface', 'pxe-address', 'dhcp-pool', 'dhcp-router', 'tftp-root', 'ramdisk-dir', 'ramdisk-args'] as const;

function ipv4(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name] as string | undefined;
  if (value !== undefined && !isIPv4(value)) throw new BcdUsageError(`--${name} must be an IPv4 address`);
  return value;
}

/** `bcd site`'s network boot flags; none given: no DHCP/TFTP (machines are booted another way). */
function pxeOptions(values: Record<string, unknown>): { pxe?: SitePxeSettings; ramdiskDir?: string; ramdiskArgs?: string[] } {
  const argsText = values['ramdisk-args'] as string | undefined;
  const ramdiskArgs = argsText?.split(/\s+/).filter(Boolean);
  // Words go onto an iPXE `kernel` line: anything that could end the line or start an iPXE setting is refused.
  const badArg = ramdiskArgs?.find((word) => !/^[A-Za-z0-9_.,:=/+-]+$/.test(word));
  if (badArg !== undefined) throw new BcdUsageError(`--ramdisk-args word ${JSON.stringify(badArg)} has characters a kernel line cannot carry safely`);
  return { ...pxeFlagsOf(values), ...(ramdiskArgs?.length ? { ramdiskArgs } : {}) };
}

function pxeFlagsOf(values: Record<string, unknown>): { pxe?: SitePxeSettings; ramdiskDir?: string } {
  const iface = values['pxe-interface'] as string | undefined;
  const address = ipv4(values, 'pxe-address');
  const router = ipv4(values, 'dhcp-router');
  const poolText = values['dhcp-pool'] as string | undefined;
  const tftpRoot = values['tftp-root'] as string | undefined;
  const ramdiskDir = values['ramdisk-dir'] as string | undefined;
  if (iface === undefined && address === undefined) {
    const stray = ['dhcp-pool', 'dhcp-router', 'tftp-root'].find((name) => values[name] !== undefined);
    if (stray) throw new BcdUsageError(`--${stray} needs --pxe-interface or --pxe-address`);
    return ramdiskDir ? { ramdiskDir } : {};
  }
  if (router && !poolText) throw new BcdUsageError('--dhcp-router needs --dhcp-pool');
  let dhcpPool: SitePxeSettings['dhcpPool'];
  if (poolText !== undefined) {
    const [first, last, ...rest] = poolText.split('-');
    // Handing out addresses is a choice a site makes on purpose: a malformed range is refused, never guessed at.
    if (rest.length > 0 || !first || !last || !isIPv4(first) || !isIPv4(last)) throw new BcdUsageError('--dhcp-pool must be <first>-<last> (IPv4 addresses)');
    dhcpPool = { first, last, ...(router ? { router } : {}) };
  }
  return {
    pxe: { ...(iface ? { interface: iface } : {}), ...(address ? { address } : {}), ...(dhcpPool ? { dhcpPool } : {}), ...(tftpRoot ? { tftpRoot } : {}) },
    ...(ramdiskDir ? { ramdiskDir } : {}),
  };
}
