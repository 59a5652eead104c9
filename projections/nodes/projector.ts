import { defineProjection } from '../runtime/projection.ts';
import { nodesMigrations } from './schema.ts';

/** The `nodes` read model: one row per bare-metal node, its lifecycle state and identity. */
export const nodesProjection = defineProjection({
  name: 'nodes',
  migrations: nodesMigrations,
  apply(db, event, metadata, position) {
    switch (event.type) {
      case 'NodeEnrolled': {
        const d = event.data;
        db.prepare(
          `INSERT INTO nodes (node_id, site_id, state, maintenance, bmc_address, bmc_credentials_ref, hardware_profile, macs, enrolled_at, updated_at, last_seq)
           VALUES (?, ?, 'enrolled', 0, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(d.nodeId, d.siteId, d.bmc.address, d.bmc.credentialsRef, d.hardwareProfile, JSON.stringify(d.macs), metadata.time, metadata.time, position.seq);
        return;
      }
      case 'NodeMaintenanceSet':
        db.prepare('UPDATE nodes SET maintenance = ?, maintenance_reason = ?, updated_at = ?, last_seq = ? WHERE node_id = ?').run(
          event.data.on ? 1 : 0,
          event.data.on ? event.data.reason : null,
          metadata.time,
          position.seq,
          event.data.nodeId,
        );
        return;
    }
  },
});
