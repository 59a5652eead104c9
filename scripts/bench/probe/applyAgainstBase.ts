/**
 * Probe: `applyBatch` with the nodes projection, this tree's against another tree's, without NATS: the fill's events
 * (the bench's payloads) are decoded into batches of 250 just before each apply and only the apply is timed (CPU of
 * this process), into fresh SQLite files (WAL, `synchronous = OFF` as a rebuild's), the two trees in alternating turns.
 * A third row runs the same statements prepared once and called directly: what SQLite costs alone.
 * `npx tsx scripts/bench/probe/applyAgainstBase.ts --base DIR [--events 100000] [--rounds 10]`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Database, Statement } from 'better-sqlite3';
import { nodesProjection } from '../../../projections/nodes/projector.ts';
import type { Projection } from '../../../projections/runtime/projection.ts';
import { openWriter } from '../../../projections/runtime/readModelDatabase.ts';
import { EventBatch } from '../../../schemas/envelope.ts';
import { applyBatch, projectEntry, type ProjectedMessage } from '../../../services/projectors/applyBatch.ts';
import { fillMessage } from '../payloads.ts';

const { values } = parseArgs({
  options: { base: { type: 'string' }, events: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '10' } },
});
if (!values.base) throw new Error('--base DIR is required: the tree to compare with');
const events = Number(values.events);
const BATCH = 250;
const base = resolve(values.base);
const baseProjection = (await import(join(base, 'projections/nodes/projector.ts'))) as { nodesProjection: Projection };
const baseApply = (await import(join(base, 'services/projectors/applyBatch.ts'))) as { applyBatch: typeof applyBatch };
const decoder = new TextDecoder();
const dir = mkdtempSync(join(tmpdir(), 'bc-apply-base-'));

const batchAt = (from: number): ProjectedMessage[] =>
  Array.from({ length: Math.min(BATCH, events - from) }, (_, k) => {
    const m = fillMessage(from + k);
    const batch = EventBatch.parse(JSON.parse(decoder.decode(m.data)));
    return projectEntry({ seq: from + k + 1, subject: m.subject, messageId: m.commandId, batch }).message;
  });

/** The fill's two statements and the checkpoint, prepared once per file and run with their arguments. */
function directStatements(): (db: Database, batch: readonly ProjectedMessage[]) => void {
  let prepared: { enroll: Statement; maintenance: Statement; checkpoint: Statement } | undefined;
  return (db, batch) => {
    prepared ??= {
      enroll: db.prepare(`INSERT INTO nodes (node_id, site_id, state, maintenance, bmc_address, bmc_credentials_ref, hardware_profile, macs, enrolled_at,
        updated_at, last_seq, pool_id, agent, addresses, bmc_options) VALUES (?, ?, 'enrolled', 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      maintenance: db.prepare(
        'UPDATE nodes SET maintenance = ?, maintenance_reason = ?, maintenance_source = ?, updated_at = ?, last_seq = ? WHERE node_id = ?',
      ),
      checkpoint: db.prepare('UPDATE _checkpoint SET seq = ?, command_id = ? WHERE id = 1'),
    };
    const { enroll, maintenance, checkpoint } = prepared;
    db.transaction(() => {
      for (const m of batch)
        for (const { event, metadata } of m.events) {
          if (event.type === 'NodeEnrolled') {
            const d = event.data;
            enroll.run(
              d.nodeId,
              d.siteId,
              d.bmc.address,
              d.bmc.credentialsRef,
              d.hardwareProfile,
              JSON.stringify(d.macs),
              metadata.time,
              metadata.time,
              m.seq,
              null,
              'bcd',
              '[]',
              '{}',
            );
          } else if (event.type === 'NodeMaintenanceSet') {
            const d = event.data;
            maintenance.run(d.on ? 1 : 0, d.on ? d.reason : null, d.on ? d.source : null, metadata.time, m.seq, d.nodeId);
          }
        }
      checkpoint.run(batch.at(-1)!.seq, batch.at(-1)!.messageId);
    })();
  };
}

const variants: [string, () => (db: Database, batch: readonly ProjectedMessage[]) => void][] = [
  ['base applyBatch', () => (db, b) => baseApply.applyBatch(db, baseProjection.nodesProjection, b)],
  ['new applyBatch', () => (db, b) => applyBatch(db, nodesProjection, b)],
  ['statements alone', directStatements],
];
const results = new Map(variants.map(([name]) => [name, [] as number[]]));
let file = 0;
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, make] of round % 2 === 0 ? variants : [...variants].reverse()) {
      const db = openWriter(join(dir, `v${file++}.db`), nodesProjection);
      db.pragma('synchronous = OFF');
      const apply = make();
      let micros = 0;
      for (let i = 0; i < events; i += BATCH) {
        const batch = batchAt(i);
        const before = process.cpuUsage();
        apply(db, batch);
        const used = process.cpuUsage(before);
        micros += used.user + used.system;
      }
      db.close();
      results.get(name)!.push(micros / events);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, xs] of results) console.log(`${name.padEnd(18)} median ${median(xs).toFixed(2)} µs CPU/event (${xs.map((x) => x.toFixed(1)).join(' ')})`);
