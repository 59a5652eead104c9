import type { NodeAtInstant } from '../api/shapes.ts';
import { byteSize as size } from '../components/byteSize.ts';
import { useNow } from '../components/useNow.ts';
import { agentLiveness } from './agentLiveness.ts';
import type { AgentPresence } from '../../../../../schemas/agent/agentPresence.ts';
import type { InventoryFinding } from '../../../../../schemas/metal/inventoryFinding.ts';

/** Where a node is and how it is reached, and its hardware from the last inspection. */
/** The agent's last heartbeat: when, which agent since when, and the error it last reported. */
function heartbeatText(heard: AgentPresence): string {
  const error = heard.lastError ? `; last error ${heard.lastError.code} at ${heard.lastError.at}: ${heard.lastError.message}` : '';
  return `${heard.agentId} (${heard.role}) at ${heard.heardAt}${heard.startedAt ? `, running since ${heard.startedAt}` : ''}${error}`;
}

type Facts = NodeAtInstant & {
  bmcAddress?: string;
  connected?: boolean;
  lastHeartbeat?: AgentPresence | null;
  /** Where the last in-band inspection disagreed with the BMC (the node view only; null: never inspected in band). */
  inventoryFindings?: readonly InventoryFinding[] | null;
};

export function NodeFacts({ node }: { node: Facts }) {
  const inv = node.inventory;
  // A live node view ticks its "heard … ago"; a node at an instant of its history has no heartbeat and never ticks.
  const now = useNow(5_000, node.lastHeartbeat !== undefined);
  const liveness =
    node.connected !== undefined && node.lastHeartbeat !== undefined
      ? agentLiveness({ agent: node.agent, connected: node.connected, lastHeartbeat: node.lastHeartbeat }, now)
      : null;
  return (
    <div className="facts">
      <dl>
        <dt>Site</dt>
        <dd>{node.siteId}</dd>
        <dt>Pool</dt>
        <dd>{node.poolId ?? 'none'}</dd>
        <dt>Tenant</dt>
        <dd>{node.tenantId ?? 'none'}</dd>
        <dt>Agent</dt>
        <dd>
          {node.agent === 'none' ? 'agentless' : 'bcd'}
          {node.connected !== undefined && ` (${node.connected ? 'connected' : 'not connected'})`}
        </dd>
        {liveness && (
          <>
            <dt>Agent liveness</dt>
            <dd data-liveness={liveness.kind}>{liveness.text}</dd>
            <dt>Last heartbeat</dt>
            <dd>{node.lastHeartbeat ? heartbeatText(node.lastHeartbeat) : 'none heard'}</dd>
          </>
        )}
        <dt>Hardware profile</dt>
        <dd>{node.hardwareProfile}</dd>
        {node.bmcAddress && (
          <>
            <dt>BMC</dt>
            <dd>{node.bmcAddress}</dd>
          </>
        )}
        <dt>MACs</dt>
        <dd>{node.macs.join(', ') || 'none'}</dd>
        <dt>Addresses</dt>
        <dd>{node.addresses.join(', ') || 'none'}</dd>
      </dl>
      <h3>Inventory</h3>
      {!inv && <p>Not inspected yet.</p>}
      {inv && (
        <dl>
          <dt>System</dt>
          <dd>{[inv.manufacturer, inv.model].filter(Boolean).join(' ') || 'unknown'}</dd>
          <dt>Serial</dt>
          <dd>{inv.serial ?? 'unknown'}</dd>
          <dt>UUID</dt>
          <dd>{inv.productUuid ?? 'unknown'}</dd>
          <dt>CPUs</dt>
          <dd>
            {inv.cpus.count} × {inv.cpus.model ?? 'unknown model'}
            {inv.cpus.cores !== null && ` (${inv.cpus.cores} cores)`}
          </dd>
          <dt>Memory</dt>
          <dd>{inv.memoryMiB === null ? 'unknown' : `${(inv.memoryMiB / 1024).toFixed(0)} GiB`}</dd>
          <dt>Disks</dt>
          <dd>{inv.disks.map((d) => `${d.id}: ${size(d.sizeBytes)}${d.model ? ` ${d.model}` : ''}`).join('; ') || 'none'}</dd>
          <dt>NICs</dt>
          <dd>{inv.nics.map((n) => `${n.id} ${n.mac}${n.ipv4Addresses?.length ? ` (${n.ipv4Addresses.join(', ')})` : ''}`).join('; ') || 'none'}</dd>
        </dl>
      )}
      {node.inventoryFindings && (
        <>
          <h3>In-band inspection</h3>
          {node.inventoryFindings.length === 0 && <p>What the machine showed from inside matches its BMC.</p>}
          <ul>
            {node.inventoryFindings.map((f) => (
              <li key={`${f.code}/${f.subject}`}>
                <code>{f.code}</code> {f.detail}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
