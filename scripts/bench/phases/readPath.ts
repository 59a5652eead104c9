import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Streams } from '../../../schemas/subjects.ts';
import type { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import type { Logger } from '../../../services/platform/logger.ts';
import { fastFillEvents } from '../fastFill.ts';
import type { Figure } from '../figure.ts';
import { measureProjectorCatchUp } from '../measure/projectorCatchUp.ts';
import { measureRebuild } from '../measure/rebuild.ts';
import type { BenchOptions } from '../options.ts';
import { fillMessage } from '../payloads.ts';

/**
 * The read side on a purged events stream: fill `projectorEvents` node events, time a projector catching up on
 * them, fill on to `rebuildEvents`, time a full rebuild.
 */
export async function readPath(
  nc: NatsConnection,
  store: EventStore,
  log: Logger,
  options: BenchOptions,
  dataDir: (name: string) => string,
  step: (what: string) => void,
): Promise<Figure[]> {
  const figures: Figure[] = [];
  await (await jetstreamManager(nc)).streams.purge(Streams.events.name);
  let filled = 0;
  let lastSeq = 0;
  const fillTo = async (events: number) => {
    if (events <= filled) return;
    step(`filling ${Streams.events.name} up to ${events.toLocaleString('en-US')} node events`);
    const from = filled;
    const fill = await fastFillEvents(store, from, events - from, fillMessage);
    step(
      `  filled ${(events - from).toLocaleString('en-US')} in ${fill.seconds.toFixed(1)} s (${Math.round((events - from) / fill.seconds).toLocaleString('en-US')} msg/s)`,
    );
    filled = events;
    lastSeq = fill.lastSeq;
  };
  if (options.only.has('projector')) {
    await fillTo(options.projectorEvents);
    step('Projector catch-up');
    figures.push(await measureProjectorCatchUp(store, log, { dataDir: dataDir('projector'), events: filled, lastSeq }));
  }
  if (options.only.has('rebuild')) {
    await fillTo(options.rebuildEvents);
    step('Projector rebuild');
    figures.push(await measureRebuild(store, log, { dataDir: dataDir('rebuild'), events: filled, lastSeq }));
  }
  return figures;
}
