import type { NatsConnection } from '@nats-io/transport-node';
import { sendCommand } from '../../services/commands/commandClient.ts';
import { PlatformError } from '../../services/platform/errors.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { RedfishTrees, startBmcSimulator, type BmcSimulator } from './bmc/index.ts';

export interface SimulatedSiteOptions {
  siteId: string;
  machines: number;
  /** First BMC port; machine i listens on base + i so enrolled addresses survive restarts (0: any free port). */
  bmcPortBase: number;
}

const SIM_USER = 'admin';
const SIM_PASSWORD = 'sim-password';

/**
 * A site of simulated machines for `npm start` and tests: Redfish BMC simulators serving the shared mockup trees,
 * the site and its machines enrolled through the same command subjects an operator uses.
 */
export async function startSimulatedSite(nc: NatsConnection, options: SimulatedSiteOptions, log: Logger) {
  const trees = Object.values(RedfishTrees);
  const bmcs: BmcSimulator[] = [];
  for (let i = 0; i < options.machines; i++) {
    const port = options.bmcPortBase === 0 ? 0 : options.bmcPortBase + i;
    bmcs.push(await startBmcSimulator({ tree: trees[i % trees.length]!, port, username: SIM_USER, password: SIM_PASSWORD, powerDelayMs: 200, mediaDelayMs: 200 }));
  }
  await ignoreExisting(sendCommand(nc, 'site.create', { siteId: options.siteId, name: `Simulated site ${options.siteId}` }, { commandId: `sim-site-${options.siteId}` }));
  for (const [i, bmc] of bmcs.entries()) {
    const nodeId = `${options.siteId}-m${String(i + 1).padStart(3, '0')}`;
    await ignoreExisting(
      sendCommand(
        nc,
        'metal.enroll',
        { nodeId, siteId: options.siteId, bmc: { address: bmc.url, credentialsRef: `secret:${nodeId}-bmc` }, hardwareProfile: trees[i % trees.length]!, macs: [simulatedMac(i)] },
        { commandId: `sim-enroll-${nodeId}` },
      ),
    );
    log.info({ nodeId, bmc: bmc.url }, 'simulated machine enrolled');
  }
  return {
    bmcs,
    stop: async () => {
      for (const bmc of bmcs) await bmc.close();
    },
  };
}

const simulatedMac = (i: number) => `52:54:00:${[(i >> 16) & 255, (i >> 8) & 255, i & 255].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;

async function ignoreExisting(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof PlatformError && err.code === 'ALREADY_EXISTS')) throw err;
  }
}
