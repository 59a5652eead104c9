import { startSimulatedSite } from '../../../daemon/simulator/simulatedSite.ts';
import { createLogger } from '../../../services/platform/logger.ts';
import { connectNats } from '../../../services/platform/nats/connect.ts';

/**
 * The simulated site of the fleet bench as a process of its own (so its CPU is not the control plane's): the site
 * agent, N BMC simulators with zero settle delay over small file disks, and each machine's in-process ramdisk.
 * argv: natsUrl siteId machines dataDir diskBytes. Prints `SITE-READY` once every machine is enrolled.
 */
const [natsUrl, siteId, machines, dataDir, diskBytes] = process.argv.slice(2);
if (!natsUrl || !siteId || !machines || !dataDir || !diskBytes) {
  console.error('usage: siteProcess <natsUrl> <siteId> <machines> <dataDir> <diskBytes>');
  process.exit(2);
}
const log = createLogger(`fleet-site-${siteId}`, process.env.BC_LOG_LEVEL ?? 'warn');
const nc = await connectNats(natsUrl, `fleet-site-${siteId}`);
const site = await startSimulatedSite(
  nc,
  { siteId, machines: Number(machines), bmcPortBase: 0, dataDir, natsUrl, diskSizeBytes: Number(diskBytes), bmcDelayMs: 0 },
  log,
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
