/**
 * Probe: the command path without HTTP. Direct-get rate (`lastSequence`), then `CommandBus.execute(metal.enroll)`
 * with the CPU split and CPU per operation. Env: BENCH_PIPELINED_APPEND=1 (appends through
 * variants/pipelinedAppender.ts). `npx tsx scripts/bench/probe/commandPath.ts [count]`
 */
import { CommandBus } from '../../../services/platform/commands/commandBus.ts';
import { allCommands } from '../../../services/api/commandCatalog.ts';
import { cpuMeter, natsServerPid } from '../cpuMeter.ts';
import { stopwatch } from '../figure.ts';
import { pipelined } from '../pipeline.ts';
import { withPipelinedAppend } from '../variants/pipelinedAppender.ts';
import { openProbeStore } from './probeStore.ts';

const count = Number(process.argv[2] ?? 10_000);
const { server, store, close } = await openProbeStore();
const bus = new CommandBus(process.env.BENCH_PIPELINED_APPEND === '1' ? withPipelinedAppend(store) : store, allCommands, { retries: 5 });
const pid = natsServerPid(server.storeDir);
await bus.execute({ name: 'site.create', payload: { siteId: 's1', name: 'S' }, actor: 'probe' });

const measure = async (name: string, n: number, inFlight: number, task: (i: number) => Promise<unknown>) => {
  const cpu = cpuMeter({ nats: pid });
  const t = stopwatch();
  await pipelined(n, inFlight, task);
  const s = t();
  const c = cpu();
  const perOp = Math.round((c.bench! / n) * 1e6);
  console.log(
    `${name.padEnd(40)} ${Math.round(n / s)
      .toLocaleString('en-US')
      .padStart(
        7,
      )}/s  ${String(perOp).padStart(5)} cpu-us/op  cpu bench ${(c.bench! / s).toFixed(2)} nats ${((c.nats ?? 0) / s).toFixed(2)} other ${((c.other ?? 0) / s).toFixed(2)}`,
  );
};
const enroll = (prefix: string) => (i: number) =>
  bus.execute({
    name: 'metal.enroll',
    payload: {
      nodeId: `${prefix}-${i}`,
      siteId: 's1',
      // One BMC system per node, as a real fleet has (enrolment refuses a system another node holds).
      bmc: { address: `https://10.0.0.1/redfish/v1/Systems/${prefix}-${i}`, credentialsRef: 'secret:b' },
      hardwareProfile: 'default',
      macs: ['52:54:00:12:34:56'],
    },
    actor: 'probe',
  });
await pipelined(2_000, 64, enroll('warm'));
for (const inFlight of [64])
  await measure(`lastSequence direct get, ${inFlight} in flight`, count, inFlight, (i) => store.lastSequence(`bc.evt.metal.node.x${i}`));
for (const inFlight of [1, 64])
  await measure(`bus.execute(metal.enroll), ${inFlight} in flight`, inFlight === 1 ? 2_000 : count, inFlight, enroll(`c${inFlight}`));
await close();
