import { useCallback, useState } from 'react';
import { useSearchParams } from 'wouter';
import { useSignedIn } from '../api/apiContext.tsx';
import type { NodeFilter } from '../api/client.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { BulkActions } from '../nodes/BulkActions.tsx';
import { nodeActions } from '../nodes/nodeActions.ts';
import { NodeFilters } from '../nodes/NodeFilters.tsx';
import { NodeTable } from '../nodes/NodeTable.tsx';
import { PoolOffers } from '../nodes/PoolOffers.tsx';
import { useNodeList } from '../nodes/useNodeList.ts';

const filterKeys = ['q', 'siteId', 'state', 'poolId', 'tenantId'] as const;

/** Every node the token may see, filtered in the URL (so a filtered view can be linked), sorted and live. */
export function NodesPage() {
  const [params, setParams] = useSearchParams();
  const filter: NodeFilter = Object.fromEntries(
    filterKeys.flatMap((k) => {
      const value = params.get(k);
      return value ? [[k, value]] : [];
    }),
  );
  const onChange = useCallback(
    (next: NodeFilter) =>
      setParams(
        Object.fromEntries(
          filterKeys.flatMap((k) => {
            const value = next[k];
            return value ? [[k, value]] : [];
          }),
        ),
        { replace: true },
      ),
    [setParams],
  );
  const { nodes, complete, error } = useNodeList(filter);
  const { session } = useSignedIn();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [bulkReport, setBulkReport] = useState<string | null>(null);
  const toggle = useCallback(
    (nodeId: string) =>
      setSelected((prev) => {
        const next = new Set(prev);
        if (!next.delete(nodeId)) next.add(nodeId);
        return next;
      }),
    [],
  );
  // Only a role with some action gets checkboxes; a node that left the list leaves the selection.
  const canAct = nodeActions.some((a) => a.id !== 'deploy' && a.roles.includes(session.role));
  const chosen = [...selected].flatMap((id) => nodes.get(id) ?? []);
  return (
    <section aria-labelledby="nodes-title">
      <h1 id="nodes-title">Nodes</h1>
      <NodeFilters filter={filter} onChange={onChange} />
      <ProblemAlert error={error} />
      <p role="status" className="count">
        {nodes.size} node{nodes.size === 1 ? '' : 's'}
        {complete ? '' : ' (loading more…)'}
      </p>
      {canAct && chosen.length > 0 && (
        <BulkActions
          selected={chosen}
          onDone={(report) => {
            setSelected(new Set());
            setBulkReport(report);
          }}
        />
      )}
      {bulkReport && <p role="status">{bulkReport}</p>}
      <NodeTable nodes={nodes} {...(canAct ? { selected, onToggle: toggle } : {})} />
      {session.role === 'tenant' && <PoolOffers />}
    </section>
  );
}
