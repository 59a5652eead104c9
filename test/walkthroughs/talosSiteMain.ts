import { join } from 'node:path';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { openRuntime } from '../../services/stack/runtime.ts';

/**
 * The simulated site of the Talos walkthrough as its own process: its machines are enrolled into the metal pool
 * BC_TEST_TALOS_POOL_ID, and machine i's BMC shows the i-th address of BC_TEST_TALOS_HOST_ADDRESSES on its first
 * NIC (the lease a DHCP server gave the OS). The parent asks `{ type: 'machines' }` for each machine's run state
 * and boot targets over IPC. Started by `talosStack.ts`.
 */
const config = loadConfig();
const runtime = await openRuntime(config, 'simulated-site');
const addresses = (process.env.BC_TEST_TALOS_HOST_ADDRESSES ?? '').split(',').filter(Boolean);
const site = await startSimulatedSite(
  runtime.nc,
  {
    siteId: config.simSiteId,
    machines: config.simMachines,
    bmcPortBase: 0,
    dataDir: join(config.dataDir, 'sim', config.simSiteId),
    natsUrl: config.natsUrl,
    diskSizeBytes: 8 << 20,
    bmcDelayMs: 50,
    ...(process.env.BC_TEST_TALOS_POOL_ID ? { poolId: process.env.BC_TEST_TALOS_POOL_ID } : {}),
    hostAddress: (i) => addresses[i],
  },
  runtime.log.child({ site: config.simSiteId }),
);

const machines = () =>
  Object.fromEntries(site.machines.map((m) => [m.nodeId, { runState: m.runState, boots: m.bmc.state.boots.map((b) => b.bootTarget), ramdiskBooted: m.bootScripts.length > 0 }]));

process.on('message', (message: { type?: string; id?: number }) => {
  if (message.type === 'machines') process.send!({ type: 'machines', id: message.id, answer: machines() });
});

let stopping = false;
const shutdown = () => {
  if (stopping) return;
  stopping = true;
  void (async () => {
    await site.stop().catch(() => undefined);
    await runtime.nc.drain().catch(() => undefined);
    process.exit(0);
  })();
};
process.on('SIGTERM', shutdown);
// The test process is gone (crashed or killed): do not linger as an orphan.
process.on('disconnect', shutdown);
process.send!({ type: 'ready' });
