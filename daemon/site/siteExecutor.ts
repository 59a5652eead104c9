import { AgentCommandKinds, type AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { createRedfishClient, type RedfishClient, type RedfishClientOptions } from '../redfish/index.ts';
import type { AgentExecutor } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';
import type { HttpProxyRequest } from '../../schemas/agent/httpProxy.ts';
import type { CredentialResolver } from './credentials.ts';
import { proxyHttp, type SecretHeaderResolver } from './httpProxy.ts';

/** Redfish client settings the site agent applies to every BMC (auth mode, TLS, timeouts, poll budgets). */
export type SiteRedfishOptions = Partial<Pick<RedfishClientOptions, 'auth' | 'tls' | 'timeoutMs' | 'timing'>>;

/** Runs the `site` kinds against the node's BMC, one Redfish client (and session) per command. */
export function siteExecutor(
  siteId: string,
  credentials: CredentialResolver,
  redfish: SiteRedfishOptions = {},
  secretHeaders?: SecretHeaderResolver,
  /** The URL a BMC should mount for `imageUrl`: the site's cache for control-plane artefacts. Default: as given. */
  mediaUrl: (imageUrl: string) => string = (imageUrl) => imageUrl,
): AgentExecutor {
  const clientFor = async (command: AgentCommand): Promise<RedfishClient> => {
    if (!command.bmc) throw new AgentError('INVALID_COMMAND', `${command.kind} needs the node's bmc endpoint`);
    const { username, password } = await credentials.resolve(command.bmc.credentialsRef, { nodeId: command.nodeId });
    return createRedfishClient({
      baseUrl: command.bmc.address,
      username,
      password,
      auth: redfish.auth ?? 'session',
      timeoutMs: redfish.timeoutMs ?? 30_000,
      ...(redfish.tls ? { tls: redfish.tls } : {}),
      ...(redfish.timing ? { timing: redfish.timing } : {}),
    });
  };

  const run = async (client: RedfishClient, command: AgentCommand, params: Record<string, unknown>): Promise<unknown> => {
    switch (command.kind) {
      case 'power.set':
        return client.setPower(params.action as 'on' | 'off' | 'cycle' | 'softOff');
      case 'power.get':
        return { powerState: await client.getPowerState() };
      case 'boot.setOnce':
        await client.setOneTimeBoot(params.target as 'Pxe' | 'Cd' | 'UefiHttp');
        return { target: params.target };
      case 'media.insert':
        return client.insertMedia(mediaUrl(params.imageUrl as string));
      case 'media.eject':
        return client.ejectMedia();
      case 'inventory.read':
        return client.getInventory();
      case 'firmware.update':
        return client.simpleUpdate(params.imageUrl as string);
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
