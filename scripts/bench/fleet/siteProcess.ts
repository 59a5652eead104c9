import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSimulatedSite } from '../../../daemon/simulator/simulatedSite.ts';
import { brokerDirOf, loadConfig } from '../../../services/platform/config.ts';
import { allCommands } from '../../../services/api/commandCatalog.ts';
import { openRuntime } from '../../../services/stack/runtime.ts';

/**
 * The simulated site of the fleet bench as a process of its own (so its CPU is not the control plane's): the site
 * agent, N BMC simulators with zero settle delay over small file disks, and each machine's in-process ramdisk.
 * argv: natsUrl siteId machines dataDir diskBytes. Prints `SITE-READY` once every machine is enrolled. Under broker auth
 * (the fleet stack's operator mode) the agents join with tokens minted on an in-process bus, as `npm start`'s site does.
 */
const [natsUrl, siteId, machines, dataDir, diskBytes] = process.argv.slice(2);
if (!natsUrl || !siteId || !machines || !dataDir || !diskBytes) {
  console.error('usage: siteProcess <natsUrl> <siteId> <machines> <dataDir> <diskBytes>');
  process.exit(2);
}
const config = loadConfig();
const runtime = await openRuntime({ ...config, natsUrl }, `fleet-site-${siteId}`, allCommands);
const { nc, log } = runtime;
const site = await startSimulatedSite(
  nc,
  {
    siteId,
    machines: Number(machines),
    bmcPortBase: 0,
    dataDir,
    natsUrl,
    diskSizeBytes: Number(diskBytes),
    bmcDelayMs: 0,
    ...(config.natsAuth === 'operator'
      ? {
          join: { joinCreds: readFileSync(join(brokerDirOf(config), 'join.creds'), 'utf8') },
          inProcess: (name: string, payload: unknown, commandId: string) => runtime.bus.execute({ name, payload, commandId, actor: 'simulated-site' }),
        }
      : {}),
  },
  log.child({ site: siteId }),
);
console.log('SITE-READY');

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await site.stop().catch((err: unknown) => log.error({ err }, 'site stop failed'));
  await nc.drain().catch(() => undefined);
  process.exit(0);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
