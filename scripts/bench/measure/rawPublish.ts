import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { figure, startTiming, type Figure } from '../figure.ts';
import { encodeBatch, maintenanceBatch } from '../payloads.ts';
import { pipelined } from '../pipeline.ts';

const STREAM = 'BENCH_RAW';

/**
 * The yardstick: plain `js.publish` of event-sized messages, `inFlight` at a time, on a scratch file-storage
 * stream. No expectations, no message ids.
 */
export async function measureRawPublish(nc: NatsConnection, options: { count: number; warmup: number; inFlight: number }): Promise<Figure> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: STREAM, subjects: ['bench.raw.>'], storage: StorageType.File, retention: RetentionPolicy.Limits });
  const js = jetstream(nc);
  const payloads = Array.from({ length: 1_000 }, (_, i) => encodeBatch(maintenanceBatch(`r-${i}`, `raw-${String(i).padStart(8, '0')}`, i)));
  const publish = (i: number) => js.publish(`bench.raw.${i % 10_000}`, payloads[i % payloads.length]);
  try {
    if (options.warmup > 0) await pipelined(options.warmup, options.inFlight, publish);
    const timing = startTiming();
    await pipelined(options.count, options.inFlight, publish);
    const measured = timing();
    return figure({
      key: 'rawPublish',
      label: `raw js.publish (${options.inFlight} in flight)`,
      count: options.count,
      timing: measured,
      unit: 'msg/s',
      target: { kind: 'none' },
      detail: { inFlight: options.inFlight, payloadBytes: payloads[0]!.length },
    });
  } finally {
    await jsm.streams.delete(STREAM);
  }
}
