/**
 * Probe: the projector's per-event CPU without NATS. Applies `count` fill events (same payloads as the bench) in
 * batches to fresh SQLite files, through the product's `applyBatch` + nodes projection and through bench copies
 * with one cost removed at a time. Rates are per CPU second of this process (robust to a busy machine) and per
 * wall second. `npx tsx scripts/bench/probe/applyBatchVariants.ts [count] [batch]`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { nodesProjection } from '../../../projections/nodes/projector.ts';
import { applyBatch, type LogMessage } from '../../../projections/runtime/applyBatch.ts';
import type { Projection } from '../../../projections/runtime/projection.ts';
import { openWriter } from '../../../projections/runtime/readModelDatabase.ts';
import { fillMessage } from '../payloads.ts';
import { cachedNodesProjection } from '../variants/cachedNodesProjection.ts';
import { leanApplyBatch, trustEnvelope, zodEnvelope } from '../variants/leanApplyBatch.ts';

const count = Number(process.argv[2] ?? 200_000);
const batchSize = Number(process.argv[3] ?? 256);
const messages: LogMessage[] = Array.from({ length: count }, (_, i) => {
  const m = fillMessage(i);
  return { seq: i + 1, subject: m.subject, commandId: m.msgId, payload: m.data };
});
const dir = mkdtempSync(join(tmpdir(), 'bc-apply-'));

type Apply = (db: Database, projection: Projection, batch: readonly LogMessage[]) => unknown;
const variants: [string, Projection, Apply][] = [
  ['product applyBatch + nodes projection', nodesProjection, applyBatch],
  ['+ statements prepared once (projection)', cachedNodesProjection, applyBatch],
  ['+ checkpoint statements prepared once', cachedNodesProjection, (db, p, b) => leanApplyBatch(db, p, b, { parse: zodEnvelope, data: 'catalog' })],
  ['+ no EventBatch zod parse (JSON.parse only)', cachedNodesProjection, (db, p, b) => leanApplyBatch(db, p, b, { parse: trustEnvelope, data: 'catalog' })],
  ['+ no catalog.read zod parse of data', cachedNodesProjection, (db, p, b) => leanApplyBatch(db, p, b, { parse: trustEnvelope, data: 'trusted' })],
];
let file = 0;
const rounds = Number(process.argv[4] ?? 2);
console.log(`${count.toLocaleString('en-US')} events, batches of ${batchSize}`);
for (let r = 0; r < rounds; r++) {
  for (const [name, projection, apply] of variants) {
    const db = openWriter(join(dir, `v${file++}.db`), projection);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < messages.length; i += batchSize) apply(db, projection, messages.slice(i, i + batchSize));
    const wall = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuS = (cpu.user + cpu.system) / 1e6;
    db.close();
    console.log(`${name.padEnd(46)} ${Math.round(count / cpuS).toLocaleString('en-US').padStart(8)} ev/cpu-s  ${Math.round(count / wall).toLocaleString('en-US').padStart(8)} ev/s wall`);
  }
}
rmSync(dir, { recursive: true, force: true });
