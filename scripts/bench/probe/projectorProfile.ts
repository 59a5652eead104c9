/**
 * Probe: a CPU profile of the projector's catch-up and of a rebuild alone (the stream is filled before the profiler
 * starts), so `topFunctions.ts` shows where their CPU goes without the fill's. Same fill and measurements as the
 * backbone bench's `projector` and `rebuild` figures.
 * `npx tsx scripts/bench/probe/projectorProfile.ts [--events 100000] [--dir DIR]`: writes `DIR/catchUp.cpuprofile` and
 * `DIR/rebuild.cpuprofile` (default DIR: a new temporary folder) and prints each phase's rate and CPU µs per event.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '../../../services/platform/logger.ts';
import { natsServerPid, processCpuSeconds } from '../cpuMeter.ts';
import { fastFillEvents } from '../fastFill.ts';
import { measureProjectorCatchUp } from '../measure/projectorCatchUp.ts';
import { measureRebuild } from '../measure/rebuild.ts';
import { fillMessage } from '../payloads.ts';
import { openProbeStore } from './probeStore.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '100000' }, dir: { type: 'string' } } });
const events = Number(values.events);
const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'bc-projector-profile-'));
mkdirSync(dir, { recursive: true });
const { server, store, close, config } = await openProbeStore();
const log = createLogger('probe', 'silent');
const natsPid = natsServerPid(server.storeDir);
try {
  const fill = await fastFillEvents(store, 0, events, fillMessage);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  const phases = {
    catchUp: (data: string) => measureProjectorCatchUp(store, log, { dataDir: data, events, lastSeq: fill.lastSeq }),
    rebuild: (data: string) => measureRebuild(store, log, { dataDir: data, events, lastSeq: fill.lastSeq }),
  };
  for (const [name, run] of Object.entries(phases)) {
    const data = join(config.dataDir, name);
    mkdirSync(data);
    const before = process.cpuUsage();
    const natsBefore = natsPid === undefined ? undefined : processCpuSeconds(natsPid);
    await session.post('Profiler.start');
    const figure = await run(data);
    const { profile } = await session.post('Profiler.stop');
    const used = process.cpuUsage(before);
    const natsAfter = natsPid === undefined ? undefined : processCpuSeconds(natsPid);
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    const nats = natsBefore === undefined || natsAfter === undefined ? NaN : ((natsAfter - natsBefore) * 1e6) / events;
    console.log(
      `${name}: ${Math.round(figure.rate)} events/s, this process ${((used.user + used.system) / events).toFixed(1)} µs CPU/event, nats-server ${nats.toFixed(1)}`,
    );
  }
  session.disconnect();
  console.log(`profiles in ${dir}`);
} finally {
  await close();
}
