import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { brokerDirOf, loadConfig, natsUrlOf } from '../../services/platform/config.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { openRuntime } from '../../services/stack/runtime.ts';

/**
 * The simulated site as `npm start` runs it (`daemon/simulator/serveSimulatedSite.ts`), plus an IPC channel to its BMC simulators' request logs, which
 * live in this process's memory: the parent sends `{ type: 'resets' }` and gets the accepted
 * `#ComputerSystem.Reset` requests per node, or `{ type: 'machines' }` and gets each machine's mounted media,
 * CD installs, boot targets and run state. BC_TEST_SIM_POOL_ID enrolls the machines into a metal pool, and
 * BC_TEST_SIM_HOST_ADDRESSES (comma-separated) gives machine i's first NIC the i-th address, as a DHCP lease would. Started by `simulatedSiteProcess.ts`. BC_TEST_SIM_DISK_BYTES and
 * BC_TEST_SIM_BMC_DELAY_MS shrink the machines' disks and BMC settle delays for fast loops; BC_TEST_SIM_HEARTBEAT_MS
 * makes the ramdisks heartbeat more often, so a test may find a dead one lost sooner (BC_AGENT_HEARTBEAT_TIMEOUT_MS).
 */
const config = loadConfig();
const hostAddresses = (process.env.BC_TEST_SIM_HOST_ADDRESSES ?? '').split(',').filter(Boolean);
const runtime = await openRuntime(config, 'simulated-site', allCommands);
const site = await startSimulatedSite(
  runtime.nc,
  {
    siteId: config.simSiteId,
    machines: config.simMachines,
    bmcPortBase: config.simBmcPortBase,
    dataDir: join(config.dataDir, 'sim', config.simSiteId),
    natsUrl: natsUrlOf(config),
    // Test-only knobs (smaller disks wipe faster, shorter BMC settle delays); unset means the service's defaults.
    ...(process.env.BC_TEST_SIM_DISK_BYTES ? { diskSizeBytes: Number(process.env.BC_TEST_SIM_DISK_BYTES) } : {}),
    ...(process.env.BC_TEST_SIM_BMC_DELAY_MS ? { bmcDelayMs: Number(process.env.BC_TEST_SIM_BMC_DELAY_MS) } : {}),
    ...(process.env.BC_TEST_SIM_HEARTBEAT_MS ? { ramdiskHeartbeatIntervalMs: Number(process.env.BC_TEST_SIM_HEARTBEAT_MS) } : {}),
    ...(process.env.BC_TEST_SIM_POOL_ID ? { poolId: process.env.BC_TEST_SIM_POOL_ID } : {}),
    ...(hostAddresses.length > 0 ? { hostAddress: (i: number) => hostAddresses[i] } : {}),
    // Under broker permissions agents join with tokens, as `npm start`'s simulated site does.
    ...(config.natsAuth === 'operator'
      ? {
          join: { joinCreds: readFileSync(join(brokerDirOf(config), 'join.creds'), 'utf8') },
          inProcess: (name: string, payload: unknown, commandId: string) => runtime.bus.execute({ name, payload, commandId, actor: 'simulated-site' }),
        }
      : {}),
  },
  runtime.log.child({ site: config.simSiteId }),
);

const resets = () =>
  Object.fromEntries(
    site.machines.map((m) => [
      m.nodeId,
      m.bmc.requestLog
        .filter((e) => e.method === 'POST' && e.path.endsWith('/ComputerSystem.Reset') && e.status !== undefined && e.status < 300)
        .map((e) => String((e.body as { ResetType?: unknown } | undefined)?.ResetType)),
    ]),
  );

/** What each machine's BMC has mounted, what it installed from a CD, and what it runs now. */
const machines = () =>
  Object.fromEntries(
    site.machines.map((m) => [
      m.nodeId,
      {
        insertedMedia: m.bmc.insertedMedia() ?? null,
        installs: m.installs,
        runState: m.runState,
        boots: m.bmc.state.boots.map((b) => b.bootTarget),
        ramdiskBooted: m.bootScripts.length > 0,
      },
    ]),
  );

process.on('message', (message: { type?: string; id?: number }) => {
  if (message.type === 'resets') process.send!({ type: 'resets', id: message.id, answer: resets() });
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
