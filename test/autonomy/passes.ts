import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { PassMarker, PublishedSignal, SensorReport, Signal } from '../../schemas/autonomy/signals.ts';
import { AUTONOMY_ENGINE_DURABLE, Streams, Subjects } from '../../schemas/subjects.ts';

/** Publishes one pass as `fleet-sensors` does: signals, then the marker (again, with `passId`, to redeliver it). */
export async function publishPassOn(
  nc: NatsConnection,
  signals: readonly Signal[],
  reports: readonly SensorReport[],
  passId = `p${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`,
): Promise<PassMarker> {
  const js = jetstream(nc);
  await Promise.all(
    signals.map((signal, index) => js.publish(Subjects.passSignal(passId, index), JSON.stringify({ passId, index, signal } satisfies PublishedSignal))),
  );
  const marker: PassMarker = { passId, at: new Date().toISOString(), sensors: [...reports], signalCount: signals.length };
  await js.publish(Subjects.passMarker(passId), JSON.stringify(marker));
  return marker;
}

/** Waits until the engines' durable has every published pass acked. */
export async function waitForEngine(nc: NatsConnection, timeoutMs = 30_000): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await jsm.consumers.info(Streams.signals.name, AUTONOMY_ENGINE_DURABLE);
    if (info.num_pending === 0 && info.num_ack_pending === 0) return;
    if (Date.now() > deadline) throw new Error(`engine did not finish: ${info.num_pending} pending, ${info.num_ack_pending} unacked`);
    await sleep(25);
  }
}
