import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brokerDirOf, loadConfig, natsUrlOf } from '../../services/platform/config.ts';
import { loadMasterKey } from '../../services/secrets/masterKey.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { openRuntime } from '../../services/stack/runtime.ts';
import { startSimulatedSite } from './simulatedSite.ts';

/**
 * The simulated site (BMC simulators, site agent, ramdisks) as a program of its own: `npm start` launches it when
 * BC_SIM_MACHINES > 0, the way it launches `serve.ts` for the product's services. It is dev and test code, so it is
 * an entry the stack starts by path and never a module the product imports (the layer check enforces that).
 */
const config = loadConfig();
const runtime = await openRuntime(config, 'simulated-site', allCommands);
const bus = runtime.bus;
const site = await startSimulatedSite(
  runtime.nc,
  {
    siteId: config.simSiteId,
    machines: config.simMachines,
    bmcPortBase: config.simBmcPortBase,
    dataDir: join(config.dataDir, 'sim', config.simSiteId),
    natsUrl: natsUrlOf(config),
    // The simulated BMCs' credentials go in as sealed secrets and the site agent gets them by grant.
    secrets: { masterKey: loadMasterKey(config) },
    // Under broker permissions agents must join with tokens (a registered key alone gets no connection).
    ...(config.natsAuth === 'operator' ? { join: { joinCreds: readFileSync(join(brokerDirOf(config), 'join.creds'), 'utf8') } } : {}),
    inProcess: (name: string, payload: unknown, commandId: string) => bus.execute({ name, payload, commandId, actor: 'simulated-site' }),
  },
  runtime.log.child({ site: config.simSiteId }),
);
runtime.log.info({ services: ['simulated-site'] }, 'services started');

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  runtime.log.info({ signal }, 'stopping');
  await site.stop().catch((err: unknown) => runtime.log.error({ err }, 'stop failed'));
  await runtime.nc.drain().catch(() => undefined);
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
// Started by the supervisor: stop when it goes away, so a killed `npm start` leaves no simulator behind.
if (process.connected) process.on('disconnect', () => void shutdown('supervisor exited'));
