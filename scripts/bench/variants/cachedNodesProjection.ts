import type { Database, Statement } from 'better-sqlite3';
import { nodesMigrations } from '../../../projections/nodes/schema.ts';
import { defineProjection } from '../../../projections/runtime/projection.ts';

/**
 * Bench copy of `projections/nodes/projector.ts` with one change: statements are prepared once per database and
 * reused, instead of `db.prepare()` (SQL parse + plan) for every event.
 */
const statements = new WeakMap<Database, { enrolled: Statement; maintenance: Statement }>();

function statementsOf(db: Database) {
  let s = statements.get(db);
  if (!s) {
    s = {
      enrolled: db.prepare(
        `INSERT INTO nodes (node_id, site_id, state, maintenance, bmc_address, bmc_credentials_ref, hardware_profile, macs, enrolled_at, updated_at, last_seq)
         VALUES (?, ?, 'enrolled', 0, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      maintenance: db.prepare('UPDATE nodes SET maintenance = ?, maintenance_reason = ?, updated_at = ?, last_seq = ? WHERE node_id = ?'),
    };
    statements.set(db, s);
  }
  return s;
}

export const cachedNodesProjection = defineProjection({
  name: 'nodes',
  migrations: nodesMigrations,
  apply(db, event, metadata, position) {
    switch (event.type) {
      case 'NodeEnrolled': {
        const d = event.data;
        statementsOf(db).enrolled.run(d.nodeId, d.siteId, d.bmc.address, d.bmc.credentialsRef, d.hardwareProfile, JSON.stringify(d.macs), metadata.time, metadata.time, position.seq);
        return;
      }
      case 'NodeMaintenanceSet':
        statementsOf(db).maintenance.run(event.data.on ? 1 : 0, event.data.on ? event.data.reason : null, metadata.time, position.seq, event.data.nodeId);
        return;
    }
  },
});
