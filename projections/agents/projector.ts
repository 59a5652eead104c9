import { defineProjection } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { agentsMigrations } from './schema.ts';

/**
 * The `agents` read model: every registered agent and since when its current key is in use (the time of the event
 * that registered or rotated it), and whether a rotation was asked for. What the autonomy key-age sensor reads; the
 * keys themselves stay in the log.
 */
export const agentsProjection = defineProjection({
  name: 'agents',
  migrations: agentsMigrations,
  apply(db, event, metadata, position) {
    switch (event.type) {
      case 'AgentRegistered':
      case 'AgentKeyRotated': {
        const d = event.data;
        const rotated = event.type === 'AgentKeyRotated' ? 1 : 0;
        statement(
          db,
          `INSERT INTO agents (agent_id, role, site_id, node_id, key_id, key_since, registered_at, rotations, last_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (agent_id) DO UPDATE SET role = excluded.role, site_id = excluded.site_id, node_id = excluded.node_id, key_id = excluded.key_id,
             key_since = excluded.key_since, rotation_requested_at = NULL, rotations = agents.rotations + ?, last_seq = excluded.last_seq`,
        ).run(d.agentId, d.role, d.siteId, d.nodeId, d.keyId, metadata.time, metadata.time, rotated, position.seq, rotated);
        return;
      }
      case 'AgentKeyRotationRequested':
        statement(db, 'UPDATE agents SET rotation_requested_at = ?, last_seq = ? WHERE agent_id = ? AND key_id = ?').run(
          metadata.time,
          position.seq,
          event.data.agentId,
          event.data.keyId,
        );
        return;
    }
  },
});
