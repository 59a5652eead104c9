import { readFileSync } from 'node:fs';
import { connectNats } from '../services/platform/nats/connect.ts';
import { loadOrCreateIdentity } from './agent/identity.ts';
import { connectJoinedAgent } from './agent/joinedConnection.ts';
import { PlatformError } from '../services/platform/errors.ts';
import { createLogger } from '../services/platform/logger.ts';
import { BcdUsageError, bcdUsage, parseBcdArgs, type BcdArgs } from './bcdArgs.ts';
import { launchNodeAgent } from './node/nodeAgent.ts';
import { startRamdiskAgent } from './ramdisk/ramdiskAgent.ts';
import { startSiteAgent } from './site/siteAgent.ts';

/**
 * `bcd`: the Better Compute daemon. `bcd site` runs a site's agent (BMCs, boot scripts, images); `bcd ramdisk`
 * runs inside a PXE-booted machine (disks); `bcd node` runs on an installed host. All stop cleanly on
 * SIGINT/SIGTERM, leaving unfinished commands unacked for redelivery.
 */
async function main(args: BcdArgs): Promise<void> {
  if (args.command === 'node') return runNode(args);
  const log = createLogger(`bcd-${args.command}`);
  // Installed before anything starts: a signal during start-up waits for the agent and then stops it.
  let signalled: ((signal: string) => void) | undefined;
  const received = new Promise<string>((resolve) => (signalled = resolve));
  process.once('SIGINT', () => signalled?.('SIGINT'));
  process.once('SIGTERM', () => signalled?.('SIGTERM'));

  const name = args.command === 'site' ? `bcd-site-${args.siteId}` : `bcd-ramdisk-${args.nodeId}`;
  const joined = args.join.token
    ? await connectJoinedAgent({
        natsUrl: args.natsUrl,
        name,
        role: args.command,
        token: args.join.token,
        identity: loadOrCreateIdentity(args.stateDir),
        siteId: args.siteId,
        ...(args.command === 'ramdisk' ? { nodeId: args.nodeId, ...productUuidOfHost() } : {}),
        ...(args.join.credsFile ? { joinCreds: readFileSync(args.join.credsFile, 'utf8') } : {}),
        log,
      })
    : undefined;
  const nc = joined?.nc ?? (await connectNats(args.natsUrl, name, { waitForServer: true }));
  const joinedAs = joined ? { joined: { durable: joined.durable, userPublicKey: joined.userPublicKey } } : {};
  const joinCreds = args.join.credsFile ? { joinCreds: readFileSync(args.join.credsFile, 'utf8') } : {};
  const agent =
    args.command === 'site'
      ? await startSiteAgent(nc, {
          siteId: args.siteId,
          stateDir: args.stateDir,
          natsUrl: args.natsUrl,
          http: { ...(args.httpHost ? { host: args.httpHost } : {}), port: args.httpPort, ...(args.advertiseUrl ? { advertiseUrl: args.advertiseUrl } : {}) },
          ...(args.labCredentialsFile ? { credentials: { labFile: args.labCredentialsFile } } : {}),
          ...(args.pxe ? { pxe: args.pxe } : {}),
          ...(args.ramdiskDir ? { ramdiskDir: args.ramdiskDir } : {}),
          ...(args.ramdiskArgs ? { ramdiskArgs: args.ramdiskArgs } : {}),
          ...joinedAs,
          ...joinCreds,
          log,
        })
      : await startRamdiskAgent(nc, {
          siteId: args.siteId,
          nodeId: args.nodeId,
          stateDir: args.stateDir,
          disks: args.disks,
          ...(args.siteUrl ? { siteCacheUrl: args.siteUrl } : {}),
          ...joinedAs,
          log,
        });
  const signal = await received;
  log.info({ signal }, 'bcd stopping');
  await agent.stop();
  await nc.drain();
}

/** `bcd node`: joins once (the membership is kept in --state, so a reboot resumes without a token), then serves. */
async function runNode(args: Extract<BcdArgs, { command: 'node' }>): Promise<void> {
  const log = createLogger('bcd-node');
  let signalled: ((signal: string) => void) | undefined;
  const received = new Promise<string>((resolve) => (signalled = resolve));
  process.once('SIGINT', () => signalled?.('SIGINT'));
  process.once('SIGTERM', () => signalled?.('SIGTERM'));
  const joinCreds = args.join.credsFile ? await readJoinCreds(args.join.credsFile) : undefined;
  const { agent, nc } = await launchNodeAgent({
    siteId: args.siteId,
    nodeId: args.nodeId,
    natsUrl: args.natsUrl,
    stateDir: args.stateDir,
    ...(args.join.token ? { token: args.join.token } : {}),
    ...(joinCreds ? { joinCreds } : {}),
    ...productUuidOfHost(),
    log,
  });
  const signal = await received;
  log.info({ signal }, 'bcd stopping');
  await agent.stop();
  await nc.drain();
}

/** An autoinstall seed names the public join credential by URL (the site serves it) or by a path on the host. */
async function readJoinCreds(ref: string): Promise<string> {
  if (!/^https?:\/\//.test(ref)) return readFileSync(ref, 'utf8');
  const response = await fetch(ref);
  if (!response.ok) throw new PlatformError('UNAVAILABLE', `join credential fetch answered ${response.status}`);
  return response.text();
}

/** The SMBIOS system UUID of the machine the agent runs on, for tokens that expect one. */
function productUuidOfHost(): { productUuid?: string } {
  try {
    const uuid = readFileSync('/sys/class/dmi/id/product_uuid', 'utf8').trim().toLowerCase();
    return /^[0-9a-f-]{36}$/.test(uuid) ? { productUuid: uuid } : {};
  } catch {
    return {};
  }
}

let parsed: BcdArgs;
try {
  parsed = parseBcdArgs(process.argv.slice(2), process.env);
} catch (err) {
  if (!(err instanceof BcdUsageError)) throw err;
  process.stderr.write(`bcd: ${err.message}\n${bcdUsage}\n`);
  process.exit(2);
}
main(parsed).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bcd: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
