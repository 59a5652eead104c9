import type { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import { figure, startTiming, type Figure } from '../figure.ts';
import { maintenanceBatch } from '../payloads.ts';
import { pipelined } from '../pipeline.ts';

let runs = 0;

/**
 * `EventStore.append` as the command bus uses it: expected last subject sequence + message id + position, many aggregates,
 * `inFlight` appends at once but never two on one aggregate (each waits for its aggregate's previous ack).
 */
export async function measureEventStoreAppend(
  store: Pick<EventStore, 'append'>,
  options: { count: number; warmup: number; inFlight: number; aggregates: number; variant?: string },
): Promise<Figure> {
  const run = async (prefix: string, count: number) => {
    const tails = new Array<Promise<number> | undefined>(options.aggregates);
    // Each aggregate's length: the position its next append stores, as the command bus writes it.
    const lengths = new Array<number>(options.aggregates).fill(0);
    const append = (i: number) => {
      const agg = i % options.aggregates;
      const nodeId = `${prefix}-${agg}`;
      const msgId = `${prefix}-${i.toString(36).padStart(8, '0')}`;
      const position = ++lengths[agg]!;
      const tail = (tails[agg] ?? Promise.resolve(0)).then(async (expectedSeq) => {
        const ack = await store.append(`bc.evt.bench.agg.${nodeId}`, maintenanceBatch(nodeId, msgId, i), { expectedSeq, msgId, position });
        if (ack.duplicate) throw new Error(`append ${msgId} answered duplicate`);
        return ack.seq;
      });
      tails[agg] = tail;
      return tail;
    };
    await pipelined(count, options.inFlight, append);
  };
  const runId = `${Date.now().toString(36)}${(++runs).toString(36)}`;
  if (options.warmup > 0) await run(`w${runId}`, options.warmup);
  const timing = startTiming();
  await run(`a${runId}`, options.count);
  const measured = timing();
  return figure({
    key: options.variant ? `eventStoreAppend:${options.variant}` : 'eventStoreAppend',
    label: `EventStore.append OCC+msgId (${options.aggregates} aggs)${options.variant ? ` [${options.variant}]` : ''}`,
    count: options.count,
    timing: measured,
    unit: 'msg/s',
    target: { kind: 'minRatio', value: 0.7 },
    detail: { inFlight: options.inFlight, aggregates: options.aggregates },
  });
}
