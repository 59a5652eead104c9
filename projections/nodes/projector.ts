import { operationStates, ownerlessStates } from '../../schemas/metal/nodeState.ts';
import { withInventoryAddresses } from '../../schemas/metal/inventory.ts';
import { cappedOperations, WaitingReason } from '../../schemas/metal/workflow.ts';
import type { Database } from 'better-sqlite3';
import type { EventMetadata } from '../../schemas/envelope.ts';
import { defineProjection, type LogPosition } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { bmcOptionsOf } from '../../schemas/agent/bmc.ts';
import { nodesMigrations } from './schema.ts';

/**
 * The statement that sets `set` on a node, built once per fragment: built per event, each event made a new string
 * of up to 600 characters and hashed it again to find its prepared statement (issue 34).
 */
const updateStatements = new Map<string, string>();
function updateSql(set: string): string {
  let sql = updateStatements.get(set);
  if (sql === undefined) updateStatements.set(set, (sql = `UPDATE nodes SET ${set}, updated_at = ?, last_seq = ? WHERE node_id = ?`));
  return sql;
}

/**
 * Sets `set` on a node, with the event's time and log position. A function of the module, not a closure made in
 * `apply`: one made per event (and named again by the loader's `__name` each time), with the statement cache's
 * lookup, was 0.3-1 µs of the 5.4-5.9 an event took in `applyBatch` (issue 34, `probe/applyAgainstBase.ts`).
 */
function update(db: Database, metadata: EventMetadata, position: LogPosition, nodeId: string, set: string, ...args: unknown[]): void {
  statement(db, updateSql(set)).run(...args, metadata.time, position.seq, nodeId);
}

/** The `nodes` read model: one row per bare-metal node, its lifecycle state, current work and identity. */
export const nodesProjection = defineProjection({
  name: 'nodes',
  migrations: nodesMigrations,
  apply(db, event, metadata, position) {
    switch (event.type) {
      case 'NodeEnrolled': {
        const d = event.data;
        statement(
          db,
          `INSERT INTO nodes (node_id, site_id, state, maintenance, bmc_address, bmc_credentials_ref, hardware_profile, macs, enrolled_at, updated_at, last_seq, pool_id, agent, addresses, bmc_options)
           VALUES (?, ?, 'enrolled', 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          d.nodeId,
          d.siteId,
          d.bmc.address,
          d.bmc.credentialsRef,
          d.hardwareProfile,
          JSON.stringify(d.macs),
          metadata.time,
          metadata.time,
          position.seq,
          d.poolId ?? null,
          d.agent ?? 'bcd',
          JSON.stringify(d.addresses ?? []),
          JSON.stringify(bmcOptionsOf(d.bmc)),
        );
        return;
      }
      case 'NodeMaintenanceSet':
        update(
          db,
          metadata,
          position,
          event.data.nodeId,
          'maintenance = ?, maintenance_reason = ?, maintenance_source = ?',
          event.data.on ? 1 : 0,
          event.data.on ? event.data.reason : null,
          event.data.on ? event.data.source : null,
        );
        return;
      case 'NodeOperationRequested': {
        const { nodeId, operation, workflowId } = event.data;
        const tenantId = event.data.tenantId ?? null;
        const role = operation === 'deploy' && typeof event.data.inputs.role === 'string' ? event.data.inputs.role : null;
        // Capped operations wait for a site slot; `WorkflowStarted` clears the reason when they get one.
        const waiting = cappedOperations[operation] ? WaitingReason.capacity : null;
        // A new operation restarts the machine: a ramdisk of an earlier boot is gone.
        update(
          db,
          metadata,
          position,
          nodeId,
          `agent_role = CASE WHEN agent_role = 'ramdisk' THEN NULL ELSE agent_role END, role = COALESCE(?, role),
           rescued_from = CASE WHEN ? = 'rescue' THEN state ELSE rescued_from END, state = ?, current_operation = ?, current_workflow_id = ?, waiting_reason = ?,
           failure_reason = NULL, failed_step = NULL, failed_operation = NULL,
           owned_since_seq = CASE WHEN ? IS NULL THEN NULL WHEN owner_tenant_id IS ? THEN owned_since_seq ELSE ? END, owner_tenant_id = ?`,
          role,
          operation,
          operationStates[operation].working,
          operation,
          workflowId,
          waiting,
          tenantId,
          tenantId,
          position.seq,
          tenantId,
        );
        if (tenantId !== null) {
          statement(db, 'INSERT OR REPLACE INTO workflow_tenants (workflow_id, node_id, tenant_id) VALUES (?, ?, ?)').run(workflowId, nodeId, tenantId);
        }
        return;
      }
      case 'TenantCapsSet':
        statement(db, 'INSERT OR REPLACE INTO tenant_caps (tenant_id, deploys, wipes) VALUES (?, ?, ?)').run(
          event.data.tenantId,
          event.data.deploys,
          event.data.wipes,
        );
        return;
      case 'WorkflowStarted':
        statement(db, 'UPDATE nodes SET waiting_reason = NULL, last_seq = ? WHERE node_id = ? AND current_workflow_id = ?').run(
          position.seq,
          event.data.nodeId,
          event.data.workflowId,
        );
        return;
      case 'NodeWipeStarted':
        update(db, metadata, position, event.data.nodeId, `state = 'wiping'`);
        return;
      case 'NodeOperationCompleted': {
        const done = event.data.state ?? operationStates[event.data.operation].done;
        // Back in `ready` (or retired), a node belongs to nobody again and is deployed as nothing.
        const release = ownerlessStates.has(done) ? ', owner_tenant_id = NULL, owned_since_seq = NULL, role = NULL' : '';
        // Only a rescue ends with the ramdisk still running; a release or retirement also ends the installed OS's agent.
        const agentRole =
          event.data.operation === 'rescue'
            ? 'agent_role'
            : ownerlessStates.has(done)
              ? 'NULL'
              : `CASE WHEN agent_role = 'ramdisk' THEN NULL ELSE agent_role END`;
        update(
          db,
          metadata,
          position,
          event.data.nodeId,
          `state = ?, current_operation = NULL, current_workflow_id = NULL, waiting_reason = NULL, agent_role = ${agentRole}${release}`,
          done,
        );
        return;
      }
      case 'NodeOperationFailed': {
        const d = event.data;
        update(
          db,
          metadata,
          position,
          d.nodeId,
          `state = 'failed', current_operation = NULL, current_workflow_id = NULL, waiting_reason = NULL, failure_reason = ?, failed_step = ?, failed_operation = ?,
           maintenance = CASE WHEN ? THEN 1 ELSE maintenance END, maintenance_reason = CASE WHEN ? THEN ? ELSE maintenance_reason END,
           maintenance_source = CASE WHEN ? THEN 'platform' ELSE maintenance_source END`,
          d.reason,
          d.failedStep,
          d.operation,
          d.maintenance ? 1 : 0,
          d.maintenance ? 1 : 0,
          d.reason,
          d.maintenance ? 1 : 0,
        );
        return;
      }
      case 'NodeOperationCancelled': {
        // Cancelled before any step ran: back where the node was; in `ready` it belongs to nobody again.
        const release = event.data.state === 'ready' ? ', owner_tenant_id = NULL, owned_since_seq = NULL' : '';
        update(
          db,
          metadata,
          position,
          event.data.nodeId,
          `state = ?, current_operation = NULL, current_workflow_id = NULL, waiting_reason = NULL,
           rescued_from = CASE WHEN ? = 'rescue' THEN NULL ELSE rescued_from END${release}`,
          event.data.state,
          event.data.operation,
        );
        return;
      }
      case 'NodeInventoryRecorded': {
        const row = statement(db, 'SELECT addresses FROM nodes WHERE node_id = ?').get(event.data.nodeId) as { addresses: string } | undefined;
        const addresses = withInventoryAddresses(row ? (JSON.parse(row.addresses) as string[]) : [], event.data.inventory);
        const { inventory, inBand, findings } = event.data;
        update(
          db,
          metadata,
          position,
          event.data.nodeId,
          'inventory = ?, addresses = ?, in_band_inventory = COALESCE(?, in_band_inventory), inventory_findings = COALESCE(?, inventory_findings)',
          JSON.stringify(inventory),
          JSON.stringify(addresses),
          inBand ? JSON.stringify(inBand) : null,
          findings ? JSON.stringify(findings) : null,
        );
        return;
      }
      // A redeployed host's `bcd node` joins again with a fresh key: a rotation, which makes it the node's agent again.
      case 'AgentRegistered':
      case 'AgentKeyRotated':
        if (event.data.role !== 'site' && event.data.nodeId !== null) {
          statement(db, 'UPDATE nodes SET agent_role = ?, updated_at = ?, last_seq = ? WHERE node_id = ? AND site_id = ?').run(
            event.data.role,
            metadata.time,
            position.seq,
            event.data.nodeId,
            event.data.siteId,
          );
        }
        return;
      case 'NodeRescueEnded':
        update(
          db,
          metadata,
          position,
          event.data.nodeId,
          `state = COALESCE(rescued_from, 'ready'), rescued_from = NULL, agent_role = NULL,
           role = CASE WHEN COALESCE(rescued_from, 'ready') = 'ready' THEN NULL ELSE role END,
           owner_tenant_id = CASE WHEN COALESCE(rescued_from, 'ready') = 'ready' THEN NULL ELSE owner_tenant_id END,
           owned_since_seq = CASE WHEN COALESCE(rescued_from, 'ready') = 'ready' THEN NULL ELSE owned_since_seq END`,
        );
        return;
      case 'NodeRetired':
        update(db, metadata, position, event.data.nodeId, `state = 'retired', role = NULL`);
        return;
      case 'NodeLabelsSet':
        update(db, metadata, position, event.data.nodeId, 'labels = ?', JSON.stringify(event.data.labels));
        return;
      default:
        return;
    }
  },
});
