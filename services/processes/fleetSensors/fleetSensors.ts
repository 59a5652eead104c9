import { randomBytes } from 'node:crypto';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { PassMarker, PublishedSignal } from '../../../schemas/autonomy/signals.ts';
import type { FleetSnapshot } from '../../../schemas/autonomy/snapshot.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import type { Sensor, SensorSettings } from '../../autonomy/sensors/sensor.ts';
import { runPass } from '../../autonomy/sensors/runPass.ts';
import type { Logger } from '../../platform/logger.ts';

export interface FleetSensorsOptions {
  sensors: readonly Sensor[];
  settings: SensorSettings;
  tickMs: number;
  snapshot(now: Date): Promise<FleetSnapshot>;
}

/** A pass id: sortable by time, unique across replicas. */
const newPassId = (now: Date) => `p${now.getTime().toString(36)}-${randomBytes(4).toString('hex')}`;

/**
 * `fleet-sensors`: every `tickMs`, one snapshot, every sensor over it, its signals and then one pass marker published
 * to `BC_SIGNALS`. Nothing here touches the event log: a steady fleet costs a few stream messages per tick, no events.
 */
export class FleetSensors {
  readonly #js: JetStreamClient;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(
    nc: NatsConnection,
    private readonly options: FleetSensorsOptions,
    private readonly log: Logger,
  ) {
    this.#js = jetstream(nc);
  }

  start(): void {
    const tick = () => {
      this.#running = this.pass().catch((err: unknown) => this.log.warn({ err }, 'sensor pass failed'));
      void this.#running.finally(() => {
        if (!this.#stopped) this.#timer = setTimeout(tick, this.options.tickMs);
      });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** One pass: publishes its signals, then the marker that lists every sensor's report. Resolves the marker. */
  async pass(now = new Date()): Promise<PassMarker> {
    const snapshot = await this.options.snapshot(now);
    const { signals, reports } = runPass(this.options.sensors, snapshot, this.options.settings);
    const passId = newPassId(now);
    const acks = signals.map((signal, index) => {
      const message: PublishedSignal = { passId, index, signal };
      return this.#js.publish(Subjects.passSignal(passId, index), JSON.stringify(message), { msgID: `${passId}.${index}` });
    });
    await Promise.all(acks);
    const marker: PassMarker = { passId, at: now.toISOString(), sensors: [...reports], signalCount: signals.length };
    await this.#js.publish(Subjects.passMarker(passId), JSON.stringify(marker), { msgID: passId });
    for (const r of reports) if (!r.ok) this.log.warn({ sensor: r.sensor, error: r.error, passId }, 'sensor failed in this pass');
    return marker;
  }
}
