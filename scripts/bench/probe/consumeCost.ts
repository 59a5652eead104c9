/**
 * Probe: what reading the log costs before any SQLite work, per message, on a stream of `count` fill events:
 * (a) the projector's durable `consume()` with one AckAll per 256 messages, (b) the rebuild's ordered consumer
 * (`m.info.pending` + the Nats-Msg-Id header per message, as replay.ts does).
 * `npx tsx scripts/bench/probe/consumeCost.ts [count]`
 */
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { Streams } from '../../../schemas/subjects.ts';
import { cpuMeter, natsServerPid } from '../cpuMeter.ts';
import { fastFillEvents } from '../fastFill.ts';
import { fillMessage } from '../payloads.ts';
import { openProbeStore } from './probeStore.ts';

const count = Number(process.argv[2] ?? 200_000);
const { server, store, close } = await openProbeStore();
const pid = natsServerPid(server.storeDir);
const fill = await fastFillEvents(store, 0, count, fillMessage);
console.log(`${count.toLocaleString('en-US')} messages filled at ${Math.round(count / fill.seconds).toLocaleString('en-US')}/s`);

const report = (name: string, cpu: ReturnType<typeof cpuMeter>, t0: number) => {
  const s = (performance.now() - t0) / 1000;
  const c = cpu();
  console.log(
    `${name.padEnd(46)} ${Math.round(count / s)
      .toLocaleString('en-US')
      .padStart(
        8,
      )}/s  cpu us/msg bench ${((1e6 * c.bench!) / count).toFixed(1)} nats ${((1e6 * (c.nats ?? 0)) / count).toFixed(1)}  other ${((c.other ?? 0) / s).toFixed(2)} cores`,
  );
};

for (let round = 0; round < 2; round++) {
  const durable = `probe_${round}`;
  await store.jsm.consumers.add(Streams.events.name, {
    durable_name: durable,
    filter_subject: 'bc.evt.>',
    ack_policy: AckPolicy.All,
    deliver_policy: DeliverPolicy.All,
    ack_wait: 30_000_000_000,
    max_ack_pending: 20_000,
  });
  let cpu = cpuMeter({ nats: pid });
  let t0 = performance.now();
  const consumer = await store.js.consumers.get(Streams.events.name, durable);
  await new Promise<void>((resolve) => {
    let pending: JsMsg[] = [];
    let seen = 0;
    void consumer.consume({
      max_messages: 2_000,
      callback: (m) => {
        pending.push(m);
        if (++seen === count || pending.length >= 256) {
          const batch = pending.map((p) => ({ seq: p.seq, commandId: p.headers?.get('Nats-Msg-Id') ?? null, payload: p.data }));
          pending.at(-1)!.ack();
          pending = [];
          if (batch.at(-1)!.seq >= fill.lastSeq) resolve();
        }
      },
    });
  });
  report('durable consume + AckAll/256 (projector path)', cpu, t0);

  cpu = cpuMeter({ nats: pid });
  t0 = performance.now();
  const ordered = await store.js.consumers.get(Streams.events.name, { filter_subjects: 'bc.evt.>', deliver_policy: DeliverPolicy.All });
  const messages = await ordered.consume({ max_messages: 5_000 });
  for await (const m of messages) {
    // Touch what the rebuild path reads of each message: its id header.
    m.headers?.get('Nats-Msg-Id');
    if (m.seq >= fill.lastSeq || m.info.pending === 0) break;
  }
  await messages.close();
  report('ordered consume (rebuild path)', cpu, t0);
}
await close();
