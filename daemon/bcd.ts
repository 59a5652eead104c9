import { readFileSync } from 'node:fs';
import { connectNats } from '../services/platform/nats/connect.ts';
import { loadOrCreateIdentity } from './agent/identity.ts';
import { connectJoinedAgent } from './agent/joinedConnection.ts';
import { pendingJoinUserKey } from './agent/pendingJoin.ts';
import { connectLongLivedAgent } from './agent/longLivedConnection.ts';
import { recordLastError } from './agent/lastError.ts';
import { loadMembership } from './agent/membership.ts';
import { PlatformError } from '../schemas/platformError.ts';
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
  if (args.command === 'site') return runSite(args);
  const log = createLogger('bcd-ramdisk');
  const received = stopSignal();
  const name = `bcd-ramdisk-${args.nodeId}`;
  const joined = args.join.token
    ? await connectJoinedAgent({
        natsUrl: args.natsUrl,
        name,
        role: 'ramdisk',
        token: args.join.token,
        identity: loadOrCreateIdentity(args.stateDir),
        siteId: args.siteId,
        nodeId: args.nodeId,
        ...productUuidOfHost(),
        // /init restarts `bcd ramdisk` in the same boot: the same user key re-sends the very join whose answer was lost.
        ...(args.join.credsFile ? { joinCreds: readFileSync(args.join.credsFile, 'utf8'), userKey: pendingJoinUserKey(args.stateDir) } : {}),
        log,
      })
    : undefined;
  const nc = joined?.nc ?? (await connectNats(args.natsUrl, name, { waitForServer: true }));
  const agent = await startRamdiskAgent(nc, {
    siteId: args.siteId,
    nodeId: args.nodeId,
    stateDir: args.stateDir,
    disks: args.disks,
    ...(args.siteUrl ? { siteCacheUrl: args.siteUrl } : {}),
    ...(joined ? { joined: { durable: joined.durable, ...(joined.userPublicKey ? { userPublicKey: joined.userPublicKey } : {}) } } : {}),
    log,
  });
  log.info({ signal: await received }, 'bcd stopping');
  await agent.stop();
  await nc.drain();
}

/**
 * `bcd site`: joins once with its token and keeps the membership (durable, credentials) in --state, so a restart after
 * a crash resumes on its own credentials without a new token (see `connectLongLivedAgent`).
 */
async function runSite(args: Extract<BcdArgs, { command: 'site' }>): Promise<void> {
  const log = createLogger('bcd-site');
  const received = stopSignal();
  const joinCreds = args.join.credsFile ? readFileSync(args.join.credsFile, 'utf8') : undefined;
  const { nc, joined } = await connectLongLivedAgent({
    role: 'site',
    siteId: args.siteId,
    natsUrl: args.natsUrl,
    name: `bcd-site-${args.siteId}`,
    stateDir: args.stateDir,
    ...(args.join.token ? { token: args.join.token } : {}),
    ...(joinCreds ? { joinCreds } : {}),
    log,
  });
  const agent = await startSiteAgent(nc, {
    siteId: args.siteId,
    stateDir: args.stateDir,
    natsUrl: args.natsUrl,
    http: { ...(args.httpHost ? { host: args.httpHost } : {}), port: args.httpPort, ...(args.advertiseUrl ? { advertiseUrl: args.advertiseUrl } : {}) },
    ...(args.labCredentialsFile ? { credentials: { labFile: args.labCredentialsFile } } : {}),
    ...(args.pxe ? { pxe: args.pxe } : {}),
    ...(args.ramdiskDir ? { ramdiskDir: args.ramdiskDir } : {}),
    ...(args.ramdiskArgs ? { ramdiskArgs: args.ramdiskArgs } : {}),
    ...(args.serialConsoles ? { serialConsoles: args.serialConsoles } : {}),
    ...(joined ? { joined: { durable: joined.durable, userPublicKey: joined.userPublicKey } } : {}),
    // Served to the site's machines at /join.creds, for their own joins.
    ...(joinCreds ? { joinCreds } : {}),
    log,
  });
  log.info({ signal: await received }, 'bcd stopping');
  await agent.stop();
  await nc.drain();
}

/** Resolves with the first SIGINT/SIGTERM; installed before anything starts, so a signal during start-up waits for the agent and then stops it. */
function stopSignal(): Promise<string> {
  return new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

/** `bcd node`: joins once (the membership is kept in --state, so a reboot resumes without a token), then serves. */
async function runNode(args: Extract<BcdArgs, { command: 'node' }>): Promise<void> {
  const log = createLogger('bcd-node');
  const received = stopSignal();
  // Only a join needs the public join credential: a host resuming its membership must not depend on the site serving it.
  const joinCreds = args.join.credsFile && !loadMembership(args.stateDir) ? await readJoinCreds(args.join.credsFile) : undefined;
  const { agent, nc, plugins } = await launchNodeAgent({
    siteId: args.siteId,
    nodeId: args.nodeId,
    natsUrl: args.natsUrl,
    stateDir: args.stateDir,
    ...(args.join.token ? { token: args.join.token } : {}),
    ...(joinCreds ? { joinCreds } : {}),
    ...productUuidOfHost(),
    ...(args.plugins ? { plugins: args.plugins } : {}),
    ...(args.siteUrl ? { siteCacheUrl: args.siteUrl } : {}),
    log,
  });
  log.info({ signal: await received }, 'bcd stopping');
  await agent.stop();
  await plugins?.stop();
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
    // The next start reports it in its heartbeats: a crash loop shows why, not only that the agent is silent.
    recordLastError(parsed.stateDir, err);
    process.stderr.write(`bcd: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
