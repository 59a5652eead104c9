import { AgentCommandKinds, type AgentCommand } from '../../schemas/agent/agentCommand.ts';
import type { BmcTls } from '../../schemas/agent/bmc.ts';
import type { Logger } from '../../services/platform/logger.ts';
import {
  createRedfishClient,
  type BiosAttributes,
  type BootMode,
  type RaidPlan,
  type RedfishClient,
  type RedfishClientOptions,
  type RedfishTlsOptions,
} from '../redfish/index.ts';
import type { AgentExecutor } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';
import type { HttpProxyRequest } from '../../schemas/agent/httpProxy.ts';
import type { BootTickets } from './bootTickets.ts';
import type { CredentialResolver } from './credentials.ts';
import { proxyHttp, type SecretHeaderResolver } from './httpProxy.ts';

/** Redfish client settings the site agent applies to every BMC: defaults for auth and TLS (a node's enrolment wins), timeouts, poll budgets. */
export type SiteRedfishOptions = Partial<Pick<RedfishClientOptions, 'auth' | 'tls' | 'timeoutMs' | 'timing'>>;

export interface SiteExecutorOptions {
  siteId: string;
  credentials: CredentialResolver;
  redfish?: SiteRedfishOptions;
  secretHeaders?: SecretHeaderResolver;
  /** The URL a BMC should mount for `imageUrl`: the site's cache for control-plane artefacts. Default: as given. */
  mediaUrl?: (imageUrl: string) => string;
  /**
   * The site's network boot path, told which machines to answer: `boot.setOnce Pxe` arms the node with the MACs its
   * BMC reports (before the override is set, so the machine's DHCP can never come first); any other target, and
   * `boot.clear` (the ramdisk has booted), disarm.
   */
  pxe?: { arm(nodeId: string, macs: readonly string[]): void; disarm(nodeId: string): void };
  /**
   * The per-boot tickets of the boot scripts: `boot.setOnce Pxe` makes the next reset a ramdisk boot, the `power.set`
   * that resets the machine mints its ticket (before the BMC is asked), any other target and `boot.clear` withdraw it.
   */
  tickets?: Pick<BootTickets, 'expectRamdiskBoot' | 'withdraw' | 'mintForReset' | 'resetRefused'>;
  log: Logger;
}

/** A node's TLS option as the client takes it; undefined: the site's default (else the system trust store). */
function tlsOf(tls: BmcTls | undefined): RedfishTlsOptions | undefined {
  switch (tls?.mode) {
    case 'ca':
      return { ca: tls.caBundle };
    case 'pin':
      return { pinnedSpkiSha256: tls.spkiSha256 };
    case 'insecure':
      return { insecure: true };
    case undefined:
      return undefined;
  }
}

/** Runs the `site` kinds against the node's BMC, one Redfish client (and session) per command. */
export function siteExecutor(options: SiteExecutorOptions): AgentExecutor {
  const { siteId, credentials, redfish = {}, secretHeaders, mediaUrl = (imageUrl) => imageUrl, pxe, tickets, log } = options;
  const clientFor = async (command: AgentCommand): Promise<RedfishClient> => {
    const bmc = command.bmc;
    if (!bmc) throw new AgentError('INVALID_COMMAND', `${command.kind} needs the node's bmc endpoint`);
    const { username, password } = await credentials.resolve(bmc.credentialsRef, { nodeId: command.nodeId });
    const tls = tlsOf(bmc.tls) ?? redfish.tls;
    // Lab only, and never quietly: every use says so.
    if (tls?.insecure)
      log.warn({ nodeId: command.nodeId, bmc: bmc.address, kind: command.kind }, 'BMC TLS certificate not verified (enrolled tls: insecure; lab use only)');
    return createRedfishClient({
      baseUrl: bmc.address,
      username,
      password,
      auth: bmc.auth ?? redfish.auth ?? 'auto',
      timeoutMs: redfish.timeoutMs ?? 30_000,
      ...(tls ? { tls } : {}),
      ...(redfish.timing ? { timing: redfish.timing } : {}),
      ...(bmc.bootMode ? { bootMode: bmc.bootMode } : {}),
    });
  };

  const run = async (client: RedfishClient, command: AgentCommand, params: Record<string, unknown>): Promise<unknown> => {
    switch (command.kind) {
      case 'power.set': {
        const action = params.action as 'on' | 'off' | 'cycle' | 'softOff';
        const { workflowId, stepIndex, attempt } = command;
        const ticket = action === 'cycle' || action === 'on' ? tickets?.mintForReset(command.nodeId, { workflowId, stepIndex, attempt }) : undefined;
        let result: Awaited<ReturnType<RedfishClient['setPower']>>;
        try {
          result = await client.setPower(action);
        } catch (err) {
          if (ticket) tickets?.resetRefused(ticket);
          throw err;
        }
        // The one case a machine may boot twice: said loudly, it names the BMC that hides its resets.
        if (result.observed === 'offThenOn')
          log.warn(
            { nodeId: command.nodeId, bmc: command.bmc?.address, resetTypes: result.resetTypes },
            'the BMC showed no power transition and no reset evidence after the restart it accepted: forced off and on instead',
          );
        return result;
      }
      case 'power.get':
        return { powerState: await client.getPowerState() };
      case 'boot.setOnce':
        if (params.target === 'Pxe') tickets?.expectRamdiskBoot(command.nodeId);
        else tickets?.withdraw(command.nodeId);
        if (pxe && params.target === 'Pxe') {
          const macs = (await client.getInventory()).nics.map((nic) => nic.mac);
          pxe.arm(command.nodeId, macs);
          log.info({ nodeId: command.nodeId, macs }, 'network boot armed');
        } else pxe?.disarm(command.nodeId);
        return client.setOneTimeBoot(params.target as 'Pxe' | 'Cd' | 'UefiHttp', params.mode as BootMode | undefined);
      case 'boot.clear':
        // The network boot is over whatever the BMC answers next.
        pxe?.disarm(command.nodeId);
        tickets?.withdraw(command.nodeId);
        return client.clearBootOverride();
      case 'media.insert':
        return client.insertMedia(mediaUrl(params.imageUrl as string));
      case 'media.eject':
        return client.ejectMedia();
      case 'inventory.read':
        return client.getInventory();
      case 'firmware.update':
        return client.simpleUpdate(params.imageUrl as string);
      case 'bios.apply':
        return client.applyBiosSettings(params.attributes as BiosAttributes);
      case 'raid.apply':
        return client.applyRaid(params as unknown as RaidPlan);
      default:
        throw new AgentError('WRONG_AGENT', `${command.kind} does not run on a site agent`);
    }
  };

  return {
    refuse(command) {
      if (command.siteId !== siteId) return `command for site ${command.siteId} reached the agent of site ${siteId}`;
      if (AgentCommandKinds[command.kind].runsOn !== 'site') return `${command.kind} runs inside the machine, not on the site agent`;
      return undefined;
    },
    async execute(command, params) {
      // The machine's own API, not its BMC: no Redfish client, no BMC credentials.
      if (command.kind === 'site.httpProxy') return proxyHttp(params as HttpProxyRequest, command.nodeId, secretHeaders);
      const client = await clientFor(command);
      try {
        return await run(client, command, params);
      } finally {
        await client.close().catch(() => undefined);
      }
    },
  };
}
