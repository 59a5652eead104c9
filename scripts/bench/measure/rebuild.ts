import { nodesProjection } from '../../../projections/nodes/projector.ts';
import { Projector } from '../../../services/projectors/projector.ts';
import { readCheckpoint } from '../../../projections/runtime/readModelDatabase.ts';
import { ReadModelFiles } from '../../../services/projectors/readModelFiles.ts';
import { Streams } from '../../../schemas/subjects.ts';
import type { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import type { Logger } from '../../../services/platform/logger.ts';
import { figure, startTiming, type Figure } from '../figure.ts';
import { assertNodeRows, PROJECTOR_MIN_RATE } from './projectorCatchUp.ts';

/**
 * `Projector.rebuild()` of the nodes read model over the whole stream (ordered consumer replay into a new file,
 * then the swap). Run it warm: the first replay in a fresh process pays for JIT warm-up, which at 300k events
 * once looked like a 25% difference between two replay implementations that perform the same.
 */
export async function measureRebuild(store: EventStore, log: Logger, options: { dataDir: string; events: number; lastSeq: number }): Promise<Figure> {
  const projector = new Projector(store, nodesProjection, new ReadModelFiles(options.dataDir, nodesProjection.name), log);
  const timing = startTiming();
  await projector.rebuild();
  const measured = timing();
  try {
    const checkpoint = readCheckpoint(projector.db).seq;
    if (checkpoint !== options.lastSeq) throw new Error(`rebuild reached ${checkpoint}, expected ${options.lastSeq}`);
    const rows = (projector.db.prepare('SELECT count(*) AS n FROM nodes').get() as { n: number }).n;
    assertNodeRows(rows, options.events, 'rebuild');
  } finally {
    await projector.stop();
    await store.jsm.consumers.delete(Streams.events.name, projector.durable);
  }
  return figure({
    key: 'rebuild',
    label: `rebuild() nodes, ${options.events.toLocaleString('en-US')} events`,
    count: options.events,
    timing: measured,
    unit: 'events/s',
    target: { kind: 'minRate', value: PROJECTOR_MIN_RATE },
  });
}
