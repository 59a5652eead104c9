import { setTimeout as sleep } from 'node:timers/promises';
import { nodesProjection } from '../../../projections/nodes/projector.ts';
import { Projector } from '../../../services/projectors/projector.ts';
import { readCheckpoint } from '../../../projections/runtime/readModelDatabase.ts';
import { ReadModelFiles } from '../../../services/projectors/readModelFiles.ts';
import { Streams } from '../../../schemas/subjects.ts';
import type { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import type { Logger } from '../../../services/platform/logger.ts';
import { figure, startTiming, type Figure } from '../figure.ts';
import { EVENTS_PER_NODE } from '../payloads.ts';

/**
 * What a projector must sustain, catching up and rebuilding alike (issue 34): 60,000 events/s, a 1,000,000-event
 * rebuild in under 17 s.
 */
export const PROJECTOR_MIN_RATE = 60_000;

/** Rows the nodes read model must hold after `events` fill events; anything else means the bench is wrong. */
export function assertNodeRows(count: number, events: number, what: string): void {
  const expected = Math.ceil(events / EVENTS_PER_NODE);
  if (count !== expected) throw new Error(`${what}: nodes table has ${count} rows, expected ${expected}`);
}

/**
 * A `Projector` (nodes projection) on a fresh data dir over a pre-filled stream: time from `start()` until its
 * checkpoint reaches the stream's last sequence.
 */
export async function measureProjectorCatchUp(store: EventStore, log: Logger, options: { dataDir: string; events: number; lastSeq: number }): Promise<Figure> {
  const projector = new Projector(store, nodesProjection, new ReadModelFiles(options.dataDir, nodesProjection.name), log);
  const timing = startTiming();
  const deadline = Date.now() + 600_000;
  await projector.start();
  let polls = 0;
  while (readCheckpoint(projector.db).seq < options.lastSeq) {
    if (Date.now() > deadline) throw new Error(`projector stuck at ${readCheckpoint(projector.db).seq} of ${options.lastSeq}`);
    polls++;
    await sleep(5);
  }
  const measured = timing();
  try {
    const rows = (projector.db.prepare('SELECT count(*) AS n FROM nodes').get() as { n: number }).n;
    assertNodeRows(rows, options.events, 'projector');
  } finally {
    await projector.stop();
    await store.jsm.consumers.delete(Streams.events.name, projector.durable);
  }
  return figure({
    key: 'projector',
    label: 'Projector catch-up (nodes)',
    count: options.events,
    timing: measured,
    unit: 'events/s',
    target: { kind: 'minRate', value: PROJECTOR_MIN_RATE },
    detail: { polls },
  });
}
