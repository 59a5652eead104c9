import type { Database } from 'better-sqlite3';

/** An agent, since when its current key is in use, and whether its replacement was asked for. */
export interface AgentKeyAge {
  readonly agentId: string;
  readonly role: 'site' | 'ramdisk' | 'node';
  readonly siteId: string;
  readonly nodeId: string | null;
  readonly keyId: string;
  readonly keySince: string;
  readonly rotations: number;
  /** When a rotation of the current key was asked for (null: none pending). */
  readonly rotationRequestedAt: string | null;
}

interface AgentRow {
  agent_id: string;
  role: AgentKeyAge['role'];
  site_id: string;
  node_id: string | null;
  key_id: string;
  key_since: string;
  rotations: number;
  rotation_requested_at: string | null;
}

/**
 * Long-lived agents (site and installed-node agents) with their key's age. A ramdisk agent's key lives for one boot
 * and its id names the key, so it never rotates: it is left out.
 */
export function longLivedAgentKeys(db: Database): AgentKeyAge[] {
  const rows = db
    .prepare(
      `SELECT agent_id, role, site_id, node_id, key_id, key_since, rotations, rotation_requested_at FROM agents WHERE role IN ('site', 'node') ORDER BY agent_id`,
    )
    .all() as AgentRow[];
  return rows.map((r) => ({
    agentId: r.agent_id,
    role: r.role,
    siteId: r.site_id,
    nodeId: r.node_id,
    keyId: r.key_id,
    keySince: r.key_since,
    rotations: r.rotations,
    rotationRequestedAt: r.rotation_requested_at,
  }));
}
