/**
 * Probe: latency of the reads a command does before it appends, on a stream of `size` messages (1 in flight):
 * `lastSequence` and `readAfter` for a subject with no messages and for one with a single message.
 * `npx tsx scripts/bench/probe/readLatency.ts [size]`
 */
import { fastFillEvents } from '../fastFill.ts';
import { fillMessage } from '../payloads.ts';
import { openProbeStore } from './probeStore.ts';

const size = Number(process.argv[2] ?? 100_000);
const { store, close } = await openProbeStore();
await fastFillEvents(store, 0, size, fillMessage);

const time = async (name: string, n: number, op: (i: number) => Promise<unknown>) => {
  for (let i = 0; i < 20; i++) await op(-1 - i);
  const t = performance.now();
  for (let i = 0; i < n; i++) await op(i);
  console.log(`${name.padEnd(52)} ${((performance.now() - t) / n).toFixed(3)} ms`);
};
const drain = async (subject: string) => {
  for await (const _ of store.readAfter(subject, 0)) void _;
};
console.log(`stream of ${size.toLocaleString('en-US')} messages`);
await time('lastSequence, subject with no messages', 500, (i) => store.lastSequence(`bc.evt.metal.node.none${i}`));
await time('readAfter(0), subject with no messages', 200, (i) => drain(`bc.evt.metal.node.none${i}`));
await time('lastSequence, subject with 1 message (early in stream)', 500, () => store.lastSequence('bc.evt.metal.node.bn-1'));
await time('readAfter(0), subject with 5 messages (early in stream)', 200, () => drain('bc.evt.metal.node.bn-1'));
await time('readAfter(0), subject with 5 messages (late in stream)', 200, () => drain(`bc.evt.metal.node.bn-${Math.floor(size / 5) - 2}`));
await close();
