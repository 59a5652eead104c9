/**
 * Probe: the projector's per-event CPU without NATS. Applies `count` fill events (same payloads as the bench) in
 * batches to fresh SQLite files, through the product's `applyBatch` + nodes projection and through bench copies
 * with one cost removed at a time (order reversed every other round). Rates are per CPU second of this process (robust to a busy machine) and per
 * wall second. `npx tsx scripts/bench/probe/applyBatchVariants.ts [count] [batch]`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { nodesProjection } from '../../../projections/nodes/projector.ts';
import { applyBatch, projectEntry } from '../../../services/projectors/applyBatch.ts';
import type { Projection } from '../../../projections/runtime/projection.ts';
import { openWriter } from '../../../projections/runtime/readModelDatabase.ts';
import { fillMessage } from '../payloads.ts';
import { leanApplyBatch, trustEnvelope, zodEnvelope, type RawFillMessage } from '../variants/leanApplyBatch.ts';

const count = Number(process.argv[2] ?? 200_000);
const batchSize = Number(process.argv[3] ?? 256);
// Batches are built just before they are applied and only the apply is timed: holding all messages in memory
// would make every GC walk a huge heap and exaggerate allocation-heavy variants (it once made per-event
// `db.prepare()` look 2.5x costlier than it is).
const batchAt = (from: number): RawFillMessage[] =>
  Array.from({ length: Math.min(batchSize, count - from) }, (_, k) => {
    const m = fillMessage(from + k);
    return { seq: from + k + 1, subject: m.subject, messageId: m.commandId, payload: m.data };
  });
const dir = mkdtempSync(join(tmpdir(), 'bc-apply-'));

type Apply = (db: Database, projection: Projection, batch: readonly RawFillMessage[]) => unknown;
const decoder = new TextDecoder();
/** The product's path without the MAC check: envelope and event validation, then the transaction. */
const productApply: Apply = (db, projection, batch) =>
  applyBatch(
    db,
    projection,
    batch.map((m) => projectEntry({ seq: m.seq, subject: m.subject, messageId: m.messageId, batch: zodEnvelope(decoder.decode(m.payload)) }).message),
  );
const variants: [string, Projection, Apply][] = [
  ['product decode + applyBatch + nodes projection', nodesProjection, productApply],
  ['no EventBatch zod parse (JSON.parse only)', nodesProjection, (db, p, b) => leanApplyBatch(db, p, b, { parse: trustEnvelope, data: 'catalog' })],
  ['+ no catalog.read zod parse of data', nodesProjection, (db, p, b) => leanApplyBatch(db, p, b, { parse: trustEnvelope, data: 'trusted' })],
];
let file = 0;
const rounds = Number(process.argv[4] ?? 2);
console.log(`${count.toLocaleString('en-US')} events, batches of ${batchSize}`);
for (let r = 0; r < rounds; r++) {
  for (const [name, projection, apply] of r % 2 === 0 ? variants : [...variants].reverse()) {
    const db = openWriter(join(dir, `v${file++}.db`), projection);
    let wall = 0;
    let cpuS = 0;
    for (let i = 0; i < count; i += batchSize) {
      const batch = batchAt(i);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      apply(db, projection, batch);
      wall += (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      cpuS += (cpu.user + cpu.system) / 1e6;
    }
    db.close();
    console.log(
      `${name.padEnd(46)} ${Math.round(count / cpuS)
        .toLocaleString('en-US')
        .padStart(8)} ev/cpu-s  ${Math.round(count / wall)
        .toLocaleString('en-US')
        .padStart(8)} ev/s wall`,
    );
  }
}
rmSync(dir, { recursive: true, force: true });
