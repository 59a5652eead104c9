import type { NatsConnection } from '@nats-io/transport-node';
import type { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import { medianOf, type Figure } from '../figure.ts';
import { measureEventStoreAppend } from '../measure/eventStoreAppend.ts';
import { measureRawPublish } from '../measure/rawPublish.ts';
import type { BenchOptions } from '../options.ts';
import { PipelinedAppender } from '../variants/pipelinedAppender.ts';

/**
 * Raw publish and event store appends, alternating over `options.rounds` rounds and reported as medians, so the
 * ratio between them holds up when the machine's background load drifts during the run.
 */
export async function writePath(nc: NatsConnection, store: EventStore, options: BenchOptions, step: (what: string) => void): Promise<Figure[]> {
  const raws: Figure[] = [];
  const appends: Figure[] = [];
  const variantAppends: Figure[] = [];
  const appender = options.variants && options.only.has('append') ? new PipelinedAppender(nc) : undefined;
  for (let round = 0; round < options.rounds; round++) {
    const first = round === 0;
    if (options.only.has('raw')) {
      step(`raw js.publish, round ${round + 1}/${options.rounds}`);
      raws.push(await measureRawPublish(nc, { ...options.raw, warmup: first ? options.raw.warmup : 0 }));
    }
    if (options.only.has('append')) {
      step(`EventStore.append, round ${round + 1}/${options.rounds}`);
      appends.push(await measureEventStoreAppend(store, { ...options.append, warmup: first ? options.append.warmup : 0 }));
    }
    if (appender) {
      step(`EventStore.append variant: pipelined appender, round ${round + 1}/${options.rounds}`);
      variantAppends.push(
        await measureEventStoreAppend(appender, { ...options.append, warmup: first ? options.append.warmup : 0, variant: 'pipelined appender' }),
      );
    }
  }
  appender?.close();
  return [raws, appends, variantAppends].filter((rounds) => rounds.length > 0).map(medianOf);
}
