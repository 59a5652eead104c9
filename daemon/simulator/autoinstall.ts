import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseBcdArgs, type BcdArgs } from '../bcdArgs.ts';
import { readIso9660 } from './isoImage.ts';

/** What one unattended install put on the machine (observable by tests). */
export interface InstallRecord {
  isoSha256: string;
  /** Where the BMC streamed the installer CD from. */
  mediaUrl: string;
  /** Every `late-commands` entry in order, as written in the seed (list entries joined by spaces). */
  lateCommands: readonly string[];
}

/** The autoinstall seed of an installer CD: `user-data` (`#cloud-config` with `autoinstall:`), parsed. */
export interface AutoinstallSeed {
  isoSha256: string;
  autoinstall: Record<string, unknown>;
  /** `late-commands` entries: a string runs under `sh -c`, a list is an argv (subiquity accepts both). */
  lateCommands: readonly (string | readonly string[])[];
  sshKeys: readonly string[];
}

export type BcdNodeArgs = Extract<BcdArgs, { command: 'node' }>;

/** Fails the boot: the BMC could not stream the image, or it holds no usable seed. */
export class AutoinstallError extends Error {
  override name = 'AutoinstallError';
  constructor(
    readonly code: 'MEDIA_UNAVAILABLE' | 'SEED_INVALID',
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fetches the inserted image as a real BMC would stream it from its URL. */
export async function fetchInstallMedia(url: string): Promise<Uint8Array> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (cause) {
    throw new AutoinstallError('MEDIA_UNAVAILABLE', `virtual media ${url} could not be fetched`, { cause });
  }
  if (!response.ok) throw new AutoinstallError('MEDIA_UNAVAILABLE', `virtual media ${url} answered ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * The seed on an installer CD, or undefined when the CD holds no autoinstall config (the live installer would then
 * wait for a person at the console). Bytes that are not ISO 9660 or YAML that does not parse fail the boot.
 */
export function autoinstallSeedOf(iso: Uint8Array): AutoinstallSeed | undefined {
  let files: Map<string, Uint8Array>;
  try {
    files = readIso9660(iso);
  } catch (cause) {
    throw new AutoinstallError('SEED_INVALID', 'the inserted media is not an ISO 9660 image', { cause });
  }
  const raw = files.get('user-data') ?? files.get('USER-DATA');
  if (!raw) return undefined;
  const text = Buffer.from(raw).toString('utf8');
  if (!text.startsWith('#cloud-config')) return undefined;
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (cause) {
    throw new AutoinstallError('SEED_INVALID', 'user-data is not valid YAML', { cause });
  }
  const autoinstall = isRecord(doc) ? doc.autoinstall : undefined;
  if (!isRecord(autoinstall)) return undefined;
  const late = autoinstall['late-commands'] ?? [];
  if (!Array.isArray(late) || !late.every((c) => typeof c === 'string' || (Array.isArray(c) && c.every((a) => typeof a === 'string')))) {
    throw new AutoinstallError('SEED_INVALID', 'autoinstall.late-commands must be a list of strings or argv lists');
  }
  const ssh = isRecord(autoinstall.ssh) ? autoinstall.ssh['authorized-keys'] : undefined;
  return {
    isoSha256: createHash('sha256').update(iso).digest('hex'),
    autoinstall,
    lateCommands: late,
    sshKeys: Array.isArray(ssh) ? ssh.filter((k): k is string => typeof k === 'string') : [],
  };
}

/** Splits a `sh -c` line into words (quotes and backslashes); undefined when it uses anything beyond one command. */
function shellWords(line: string): string[] | undefined {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i]!;
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i]!;
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (/[;&|<>`$()]/.test(c)) {
      return undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote) return undefined;
  if (word !== undefined) words.push(word);
  return words;
}

/**
 * The `bcd node` arguments of a late-command, or undefined when it is some other command. Accepts a leading
 * `curtin in-target ... --` (run in the installed system) and `NAME=value` environment assignments
 * (`BC_JOIN_TOKEN=... bcd node ...`). A `bcd node` line with bad arguments throws BcdUsageError, as `bcd` exits 2.
 */
export function bcdNodeArgsOf(command: string | readonly string[]): BcdNodeArgs | undefined {
  let argv = typeof command === 'string' ? shellWords(command) : [...command];
  if (!argv) return undefined;
  if (argv[0] === 'curtin' && argv[1] === 'in-target') {
    const end = argv.indexOf('--');
    if (end < 0) return undefined;
    argv = argv.slice(end + 1);
  }
  const env: Record<string, string> = {};
  while (argv[0] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[0])) {
    const [name, ...value] = argv.shift()!.split('=');
    env[name!] = value.join('=');
  }
  if (argv[0] === undefined || basename(argv[0]) !== 'bcd' || argv[1] !== 'node') return undefined;
  return parseBcdArgs(argv.slice(1), env) as BcdNodeArgs;
}

/** The public join credential a `bcd node --join-creds` names: fetched when a URL; a path on the target host is not simulated. */
export async function joinCredsOf(ref: string): Promise<string> {
  if (!/^https?:\/\//.test(ref))
    throw new AutoinstallError('SEED_INVALID', `join credentials at ${ref} would be a file on the installed host; the simulation needs a URL`);
  const response = await fetch(ref);
  if (!response.ok) throw new AutoinstallError('MEDIA_UNAVAILABLE', `join credential fetch answered ${response.status}`);
  return response.text();
}

const MARKER = 'BC-SIM-OS 1\n';

/** What an installed disk says about itself: the first line of the simulated OS's header. */
export interface OsMarker {
  installer: string;
  isoSha256: string;
}

/**
 * "Installs" the OS: a header on the first disk (so a disk boot finds an OS) naming the installer and the ISO it
 * came from, the seed's SSH keys next to it (`<disk>.userdata.json`, the ramdisk's format), and a fresh node state
 * directory (a new OS is a new host: its old agent key and membership go). The seed itself is not copied to disk:
 * its late-commands carry a join token.
 */
export function installOs(disk: string, osStateDir: string, seed: AutoinstallSeed): Omit<InstallRecord, 'mediaUrl'> {
  const header = Buffer.from(`${MARKER}${JSON.stringify({ installer: 'ubuntu-autoinstall', isoSha256: seed.isoSha256 } satisfies OsMarker)}\n`);
  const fd = openSync(disk, 'r+');
  try {
    writeSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  writeFileSync(`${disk}.userdata.json`, JSON.stringify({ userData: null, sshKeys: seed.sshKeys }), { mode: 0o600 });
  rmSync(osStateDir, { recursive: true, force: true });
  return { isoSha256: seed.isoSha256, lateCommands: seed.lateCommands.map((c) => (typeof c === 'string' ? c : c.join(' '))) };
}

/** The installed OS on `disk`, or undefined when it holds something else (an image, zeros). */
export function readOsMarker(disk: string): OsMarker | undefined {
  const head = Buffer.alloc(4096);
  const fd = openSync(disk, 'r');
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  const text = head.toString('utf8');
  if (!text.startsWith(MARKER)) return undefined;
  try {
    return JSON.parse(text.slice(MARKER.length, text.indexOf('\n', MARKER.length))) as OsMarker;
  } catch {
    return undefined;
  }
}

/** How the installed OS starts its agent at boot: the `bcd node` arguments without the (spent) token. */
export interface NodeUnit {
  siteId: string;
  nodeId: string;
  natsUrl: string;
}

const unitFile = (osStateDir: string) => join(osStateDir, 'bcd-node.unit.json');

/** Written once the first start joined, like the service unit an installer leaves behind. */
export function saveNodeUnit(osStateDir: string, unit: NodeUnit): void {
  writeFileSync(unitFile(osStateDir), JSON.stringify(unit));
}

export function loadNodeUnit(osStateDir: string): NodeUnit | undefined {
  return existsSync(unitFile(osStateDir)) ? (JSON.parse(readFileSync(unitFile(osStateDir), 'utf8')) as NodeUnit) : undefined;
}
