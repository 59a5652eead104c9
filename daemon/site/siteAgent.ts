import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Subjects } from '../../schemas/subjects.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { startCommandConsumer } from '../agent/commandConsumer.ts';
import { runCommand } from '../agent/commandRunner.ts';
import { NodeLogPublisher } from '../agent/nodeLogPublisher.ts';
import { tailSerialConsole } from './serialConsoleTail.ts';
import { AgentKeyring } from '../agent/agentKeyring.ts';
import { loadOrCreateIdentity, siteAgentId } from '../agent/identity.ts';
import type { KeyRotationDeps } from '../agent/keyRotation.ts';
import { resumePendingRotation, watchKeyRotation } from '../agent/keyRotationWatch.ts';
import { SigningGate } from '../agent/signingGate.ts';
import { CommandJournal } from '../agent/journal.ts';
import { registerAgent, registrationOf } from '../agent/registration.ts';
import { ResultPublisher } from '../agent/resultPublisher.ts';
import { requestBootJoinToken } from './bootJoinTokens.ts';
import { BootTickets } from './bootTickets.ts';
import { startBootServer } from './bootServer.ts';
import { fileCredentialResolver, type CredentialResolver } from './credentials.ts';
import { grantedCredentialResolver, grantedSecretHeaders } from './grantedCredentials.ts';
import { ImageCache } from './imageCache.ts';
import { watchImageSources } from './imageSourceWatcher.ts';
import { ramdiskIpxeScript, type RamdiskArtefacts } from './ipxeScript.ts';
import { siteExecutor, type SiteRedfishOptions } from './siteExecutor.ts';
import { blobDigestOf } from '../../schemas/blobs.ts';
import { PxeArms } from './pxe/pxeArms.ts';
import { pxeAddressOf, startSiteBootPath, type SiteBootPath, type SitePxeSettings } from './pxe/siteBootPath.ts';

export interface SiteAgentOptions {
  siteId: string;
  /** Identity, journal, boot tokens and image cache live here and survive restarts. */
  stateDir: string;
  /** Put in the iPXE kernel line so the ramdisk reaches the same NATS. */
  natsUrl: string;
  /** Boot/image HTTP server; port 0 (default) picks a free one. `advertiseUrl` when machines must use another address. */
  http?: { host?: string; port?: number; advertiseUrl?: string };
  /**
   * Where BMC credentials come from. `'granted'` (default): short-lived grants of the control plane's sealed secrets
   * (`grantedCredentials.ts`), held in memory only. `{ labFile }`: LAB ONLY, plaintext credentials in a file on the
   * site (simulators, bench rigs); the agent warns at start.
   */
  credentials?: CredentialResolver | 'granted' | { labFile: string };
  redfish?: SiteRedfishOptions;
  ramdisk?: RamdiskArtefacts;
  /** Default 30 s; long BMC operations heartbeat at a third of it. */
  ackWaitMs?: number;
  /**
   * Set when the agent joined with a token (`connectJoinedAgent`): its key is registered and its durable made by the
   * control plane, and each machine's boot script carries a single-use join token asked for at fetch time.
   */
  joined?: {
    durable: string;
    /**
     * Broker mode: the user key its credentials were issued to, which names its own key-status and registration
     * subjects (the broker refuses any other). Undefined only without broker auth.
     */
    userPublicKey: string | undefined;
  };
  /**
   * How often it asks whether the control plane wants its key rotated (`bc.trust.keyStatus.<agentId>.<user>`; default
   * 10 minutes). Broker mode asks on `joined.userPublicKey`'s subject.
   */
  keyCheckIntervalMs?: number;
  /** Broker mode: the public join credential, served to machines at `/join.creds`. */
  joinCreds?: string;
  /**
   * Network boot on a real provisioning network: DHCP (proxy by default) and TFTP of iPXE, answering only machines
   * the control plane set to boot PXE. The HTTP server then listens on that network's address unless `http.host` says
   * otherwise.
   */
  pxe?: SitePxeSettings;
  /** The built ramdisk (`vmlinuz`, `initrd.img`), served at `/ramdisk/…` for the iPXE scripts' default URLs. */
  ramdiskDir?: string;
  /** How long after its reset a machine has to fetch its boot script (default `BC_RAMDISK_BOOT_BUDGET_MS`, else 5 min). */
  bootBudgetMs?: number;
  /** Kernel arguments added to every machine's ramdisk boot (`--ramdisk-args`). */
  ramdiskArgs?: readonly string[];
  /** Machines whose serial console is written to a file here (node id → path): followed onto their `serial` log. */
  serialConsoles?: Readonly<Record<string, string>>;
  log: Logger;
}

/** A running `bcd site`. */
export interface SiteAgent {
  readonly agentId: string;
  /** The key it signs with now (a rotation changes it). */
  readonly keyId: string;
  /** base64 raw Ed25519 public key, as registered. */
  readonly publicKey: string;
  /** Base URL of the boot/image HTTP server. */
  readonly httpUrl: string;
  /** Resolves once `agent.register` was answered. */
  readonly registered: Promise<void>;
  /**
   * The iPXE script URL of the machine's current boot: its ticket is minted with the reset that a `boot.setOnce Pxe`
   * made a ramdisk boot, and good for one fetch. Undefined when no ramdisk boot of the machine is under way.
   */
  bootUrlFor(nodeId: string): string | undefined;
  /**
   * Registers an image source; returns the URL machines fetch it from (verified before it is ever served). Sources
   * named by `image.write` commands for this site's machines are registered automatically.
   */
  cacheImage(sourceUrl: string, sha256: string): string;
  /** Resolves when no command is executing. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `bcd site`: one per site. Registers its key, consumes `bc.site.<siteId>.cmd.>` through the durable consumer
 * `site_<siteId>`, runs each command against the node's BMC and publishes the signed result, and serves iPXE
 * scripts and cached images to the site's machines.
 */
export async function startSiteAgent(nc: NatsConnection, options: SiteAgentOptions): Promise<SiteAgent> {
  const { siteId, log } = options;
  const agentId = siteAgentId(siteId);
  // One keyring for everything that signs, so a rotation switches results, grants and boot tokens at once.
  const identity = new AgentKeyring(loadOrCreateIdentity(options.stateDir));
  const gate = new SigningGate();
  const journal = new CommandJournal(options.stateDir);
  const tickets = new BootTickets(options.stateDir, options.bootBudgetMs ? { budgetMs: options.bootBudgetMs } : {});
  const images = new ImageCache(options.stateDir);
  const results = new ResultPublisher(jetstream(nc), await jetstreamManager(nc, { checkAPI: false }), identity, agentId, options.log);
  const arms = options.pxe ? new PxeArms(options.stateDir) : undefined;
  // Resolved first: a wrong interface fails the start before anything registers or listens.
  const pxeAddress = options.pxe ? pxeAddressOf(options.pxe).address : undefined;
  const stopRegistering = new AbortController();
  const userPublicKey = options.joined?.userPublicKey;
  const rotation: KeyRotationDeps = {
    nc,
    agent: { agentId, role: 'site', siteId },
    keyring: identity,
    stateDir: options.stateDir,
    log,
    ...(userPublicKey ? { userPublicKey } : {}),
  };
  // A rotation a crash interrupted is settled first: until then the control plane may hold either key.
  const resumed = resumePendingRotation(rotation, gate, stopRegistering.signal);
  const registered = options.joined
    ? resumed
    : resumed.then(() => registerAgent(nc, registrationOf(identity, { agentId, role: 'site', siteId }), log, stopRegistering.signal));
  const keyWatch = watchKeyRotation(rotation, {
    gate,
    after: registered,
    signal: stopRegistering.signal,
    ...(options.keyCheckIntervalMs ? { intervalMs: options.keyCheckIntervalMs } : {}),
  });
  registered.catch((err: unknown) => log.error({ err, agentId }, 'agent registration refused'));
  // Secret headers of `site.httpProxy` are always granted per command (the executor's ticket names them), whatever
  // holds the BMC credentials; the grant service knows the agent once its key is registered.
  const secretHeaders = grantedSecretHeaders(nc, { agentId, identity });
  // Bound once the boot server listens (below); no command runs before the consumer starts after it.
  let cacheUrl = (sourceUrl: string, _sha256: string) => sourceUrl;
  const executor = siteExecutor({
    siteId,
    credentials: credentialResolverOf(options, nc, { agentId, identity }, registered),
    ...(options.redfish ? { redfish: options.redfish } : {}),
    secretHeaders: async (ref, context) => (await registered, secretHeaders(ref, context)),
    // A control-plane artefact (a seed ISO) reaches the BMC through this site's verified cache, like images do.
    mediaUrl: (imageUrl) => {
      const sha256 = blobDigestOf(imageUrl);
      return sha256 ? cacheUrl(imageUrl, sha256) : imageUrl;
    },
    ...(arms ? { pxe: arms } : {}),
    tickets,
    log,
  });
  const server = await startBootServer({
    host: options.http?.host ?? pxeAddress ?? '127.0.0.1',
    port: options.http?.port ?? 0,
    tickets,
    images,
    log,
    ...(options.joinCreds ? { joinCreds: options.joinCreds } : {}),
    ...(options.ramdiskDir ? { ramdiskDir: options.ramdiskDir } : {}),
    // A joined site tells the control plane: the boot is contested, the workflow fails closed.
    ...(options.joined
      ? { refetched: async (ticket) => void (await requestBootJoinToken(nc, { agentId, identity }, ticket, { refetch: true }).catch(() => undefined)) }
      : {}),
    script: async (ticket, serverUrl) => {
      const { nodeId } = ticket;
      const baseUrl = options.http?.advertiseUrl ?? serverUrl;
      // A joined site's machines join too: the token is minted for this boot only and exists nowhere but the script.
      const joinToken = options.joined ? await requestBootJoinToken(nc, { agentId, identity }, ticket) : undefined;
      return ramdiskIpxeScript({
        siteId,
        nodeId,
        natsUrl: options.natsUrl,
        baseUrl,
        ...(options.ramdisk ? { artefacts: options.ramdisk } : {}),
        ...(joinToken ? { joinToken } : {}),
        ...(options.joinCreds ? { joinCredsUrl: `${baseUrl}/join.creds` } : {}),
        ...(options.ramdiskArgs ? { extraArgs: options.ramdiskArgs } : {}),
      });
    },
  });
  const httpUrl = options.http?.advertiseUrl ?? server.baseUrl;
  cacheUrl = (sourceUrl, sha256) => {
    images.register(sourceUrl, sha256);
    return `${httpUrl}/images/${sha256}`;
  };

  const imageWatch = watchImageSources(nc, siteId, images, httpUrl, log);
  const bootUrlFor = (nodeId: string) => {
    const path = tickets.pathOf(nodeId);
    return path ? `${httpUrl}${path}` : undefined;
  };
  let bootPath: SiteBootPath | undefined;
  try {
    bootPath = options.pxe && arms ? await startSiteBootPath({ settings: options.pxe, arms, scriptUrl: bootUrlFor, log }) : undefined;
  } catch (err) {
    imageWatch.unsubscribe();
    await server.close();
    throw err;
  }

  // Each BMC command's start, exit and progress, on the node's log (`site-agent` lines, rate-limited).
  const logs = new NodeLogPublisher((subject, data) => nc.publish(subject, data), siteId, 'site-agent');
  const serialLogs = new NodeLogPublisher((subject, data) => nc.publish(subject, data), siteId, 'serial');
  const serialTails = Object.entries(options.serialConsoles ?? {}).map(([nodeId, path]) => tailSerialConsole(path, nodeId, serialLogs));
  const consumer = await startCommandConsumer(nc, {
    durable: options.joined?.durable ?? `site_${siteId}`,
    durableExists: options.joined !== undefined,
    filterSubject: Subjects.siteAgentCommandFilter(siteId),
    ackWaitMs: options.ackWaitMs ?? 30_000,
    // bc.site.<siteId>.cmd.<nodeId>: one BMC's commands in order, different BMCs in parallel.
    serialiseBy: (msg) => msg.subject,
    // Nothing runs before the registration is answered: a result signed by a key the control plane does not know yet
    // is refused for good (UNKNOWN_AGENT), and the step would wait for another until its timeout.
    handle: async (data, ctx) => {
      await registered.catch(() => undefined);
      return ctx.signal.aborted ? 'aborted' : gate.signing(() => runCommand(data, ctx, { agentId, journal, results, executor, log, logs }));
    },
    log,
  });
  log.info({ agentId, keyId: identity.keyId, http: httpUrl }, 'site agent started');

  return {
    agentId,
    get keyId() {
      return identity.keyId;
    },
    get publicKey() {
      return identity.publicKeyBase64;
    },
    httpUrl,
    registered,
    bootUrlFor,
    cacheImage: (sourceUrl, sha256) => cacheUrl(sourceUrl, sha256),
    idle: () => consumer.idle(),
    stop: async () => {
      stopRegistering.abort();
      imageWatch.unsubscribe();
      await consumer.stop();
      await Promise.all(serialTails.map((tail) => tail.stop()));
      logs.close();
      serialLogs.close();
      await keyWatch.done;
      await bootPath?.close();
      await server.close();
      journal.close();
    },
  };
}

function credentialResolverOf(
  options: SiteAgentOptions,
  nc: NatsConnection,
  requester: Parameters<typeof grantedCredentialResolver>[1],
  registered: Promise<void>,
): CredentialResolver {
  const { credentials } = options;
  if (credentials !== undefined && typeof credentials === 'object' && 'labFile' in credentials) {
    options.log.warn(
      { path: credentials.labFile },
      'BMC credentials come from a plaintext file on this site (lab only); production sites are granted sealed secrets',
    );
    return fileCredentialResolver(credentials.labFile);
  }
  if (credentials !== undefined && credentials !== 'granted') return credentials;
  const granted = grantedCredentialResolver(nc, requester);
  // The grant service knows the agent only once its key is registered.
  return { resolve: async (ref, context) => (await registered, granted.resolve(ref, context)) };
}
