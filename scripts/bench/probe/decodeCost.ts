/**
 * Probe: what `EventStore.decode` costs per event, as a projector's catch-up meets the log: every message once, in
 * order, verified and parsed. Reports CPU µs per event and the garbage collector's share (pauses from `gc`
 * performance entries), without the consumer or SQLite around it, so two trees can be told apart where the whole
 * catch-up's noise would hide them.
 * `node --expose-gc --import tsx scripts/bench/probe/decodeCost.ts [--tree DIR] [--events 100000] [--warmup 50000] [--state-chars N]`: DIR
 * is a tree of the repo (default this one) whose event store, MAC and bench payloads are measured; `--state-chars`
 * gives each message a position and a carried state of N characters (`Bc-Aggregate-State`, which every reader
 * hashes and skips); prints one JSON line.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { headers } from '@nats-io/transport-node';
import { connectNats } from '../../../services/platform/nats/connect.ts';
import { startNatsServer } from '../../../services/platform/nats/embeddedServer.ts';
import type { EventStore, RawLogMessage } from '../../../services/platform/eventStore/eventStore.ts';
import type { EventMac } from '../../../services/platform/eventStore/eventMac.ts';
import type { EventFillMessage } from '../fastFill.ts';

const { values } = parseArgs({
  options: {
    tree: { type: 'string' },
    events: { type: 'string', default: '100000' },
    warmup: { type: 'string', default: '50000' },
    'state-chars': { type: 'string', default: '0' },
  },
});
const tree = resolve(values.tree ?? join(import.meta.dirname, '../../..'));
const events = Number(values.events);
const warmup = Number(values.warmup);
const BATCH = 1_000;
const stateChars = Number(values['state-chars']);
const state = stateChars > 0 ? `1 1 ${JSON.stringify({ s: 'x'.repeat(Math.max(0, stateChars - 8)) })}` : '';

// The tree's own modules: the code under test is whatever that tree holds.
const { EventStore: Store } = (await import(join(tree, 'services/platform/eventStore/eventStore.ts'))) as { EventStore: typeof EventStore };
const { EventMac: Mac, EventHeaders } = (await import(join(tree, 'services/platform/eventStore/eventMac.ts'))) as {
  EventMac: typeof EventMac;
  EventHeaders: { mac: string; messageId: string; expectedSeq: string; position?: string; state?: string };
};
const { fillMessage } = (await import(join(tree, 'scripts/bench/payloads.ts'))) as { fillMessage: (i: number) => EventFillMessage };

/** Messages `from`..`from + count - 1` of the projector fill, stored as the event store would have written them. */
function messages(mac: EventMac, from: number, count: number): RawLogMessage[] {
  const out: RawLogMessage[] = [];
  for (let i = from; i < from + count; i++) {
    const m = fillMessage(i);
    const messageId = mac.messageId(m.commandId);
    const expected = m.previousIndex === undefined ? 0 : m.previousIndex + 1;
    const h = headers();
    h.set(EventHeaders.messageId, messageId);
    h.set(EventHeaders.expectedSeq, String(expected));
    if (state) {
      h.set(EventHeaders.position!, '2');
      h.set(EventHeaders.state!, state);
    }
    h.set(EventHeaders.mac, state ? mac.sign(m.subject, messageId, expected, m.data, 2, state) : mac.sign(m.subject, messageId, expected, m.data));
    out.push({ seq: i + 1, subject: m.subject, headers: h, data: m.data });
  }
  return out;
}

const root = mkdtempSync(join(tmpdir(), 'bc-decode-cost-'));
const server = await startNatsServer({ storeDir: join(root, 'nats') });
try {
  const nc = await connectNats(server.url, 'decode-cost');
  try {
    const mac = new Mac(randomBytes(32));
    const store = await Store.open(nc, mac);
    let sink = 0;
    for (let from = 0; from < warmup; from += BATCH) for (const m of messages(mac, from, BATCH)) sink += store.decode(m).seq;
    // Made before the timing starts, and collected garbage out of the way (with `--expose-gc`), so the pauses counted
    // are the decode's own.
    const measured = messages(mac, warmup, events);
    (globalThis as { gc?: () => void }).gc?.();
    let gcMs = 0;
    let gcPauses = 0;
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        gcMs += e.duration;
        gcPauses++;
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    const before = process.cpuUsage();
    const started = performance.now();
    for (const m of measured) {
      const entry = store.decode(m);
      if (entry.rejection) throw new Error(`message ${m.seq} refused: ${entry.rejection.reason}`);
      sink += entry.seq;
    }
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(before);
    const cpuMicros = used.user + used.system;
    // Entries are delivered after the work that caused them: give the observer its turn.
    await new Promise((r) => setTimeout(r, 100));
    observer.disconnect();
    if (sink === 0) throw new Error('nothing decoded');
    console.log(
      JSON.stringify({
        tree,
        events,
        stateChars,
        cpuMicrosPerEvent: cpuMicros / events,
        wallMicrosPerEvent: (wallMs * 1000) / events,
        gcMs,
        gcPauses,
        gcShare: gcMs / wallMs,
      }),
    );
  } finally {
    await nc.close();
  }
} finally {
  await server.stop();
  rmSync(root, { recursive: true, force: true });
}
