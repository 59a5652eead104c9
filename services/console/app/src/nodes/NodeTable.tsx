import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState } from 'react';
import { Link } from 'wouter';
import type { NodeRowView } from '../api/shapes.ts';
import { StateBadge } from '../components/StateBadge.tsx';

type SortKey = 'nodeId' | 'siteId' | 'state' | 'poolId' | 'tenantId' | 'updatedAt';
const columns: readonly { key: SortKey; label: string }[] = [
  { key: 'nodeId', label: 'Node' },
  { key: 'siteId', label: 'Site' },
  { key: 'state', label: 'State' },
  { key: 'poolId', label: 'Pool' },
  { key: 'tenantId', label: 'Tenant' },
  { key: 'updatedAt', label: 'Updated' },
];
const rowHeight = 36;

/**
 * The nodes, sorted by any column, rendered as a virtual list: only the rows in view are in the page, so ten thousand
 * nodes scroll as smoothly as ten. ARIA table roles keep it a table for assistive technology.
 */
export function NodeTable({
  nodes,
  selected,
  onToggle,
}: {
  nodes: ReadonlyMap<string, NodeRowView>;
  /** With `onToggle`: a checkbox per row, for bulk actions. */
  selected?: ReadonlySet<string>;
  onToggle?: (nodeId: string) => void;
}) {
  const rowClass = onToggle ? 'node-row selectable' : 'node-row';
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({ key: 'nodeId', descending: false });
  const rows = useMemo(() => {
    const sorted = [...nodes.values()].sort((a, b) => (a[sort.key] ?? '').localeCompare(b[sort.key] ?? '') || a.nodeId.localeCompare(b.nodeId));
    return sort.descending ? sorted.reverse() : sorted;
  }, [nodes, sort]);
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => rowHeight, overscan: 12 });

  return (
    <div role="table" aria-label="Nodes" aria-rowcount={rows.length + 1} className="node-table">
      <div role="rowgroup">
        <div role="row" aria-rowindex={1} className={`${rowClass} node-head`}>
          {onToggle && (
            <div role="columnheader">
              <span className="visually-hidden">Select</span>
            </div>
          )}
          {columns.map((c) => (
            <div role="columnheader" key={c.key} aria-sort={sort.key === c.key ? (sort.descending ? 'descending' : 'ascending') : 'none'}>
              <button type="button" onClick={() => setSort((s) => ({ key: c.key, descending: s.key === c.key ? !s.descending : false }))}>
                {c.label}
                <span aria-hidden="true">{sort.key === c.key ? (sort.descending ? ' ▼' : ' ▲') : ''}</span>
              </button>
            </div>
          ))}
        </div>
      </div>
      <div role="rowgroup" ref={scroller} className="node-scroller">
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const node = rows[item.index]!;
            return (
              <div
                role="row"
                key={node.nodeId}
                aria-rowindex={item.index + 2}
                className={rowClass}
                data-node={node.nodeId}
                style={{ position: 'absolute', top: 0, left: 0, right: 0, height: rowHeight, transform: `translateY(${item.start}px)` }}
              >
                {onToggle && (
                  <div role="cell">
                    <input
                      type="checkbox"
                      aria-label={`Select ${node.nodeId}`}
                      checked={selected?.has(node.nodeId) ?? false}
                      onChange={() => onToggle(node.nodeId)}
                    />
                  </div>
                )}
                <div role="cell">
                  <Link href={`/nodes/${encodeURIComponent(node.nodeId)}`}>{node.nodeId}</Link>
                </div>
                <div role="cell">{node.siteId}</div>
                <div role="cell">
                  <StateBadge state={node.state} />
                  {node.maintenance && <span className="flag"> maintenance</span>}
                  {node.waitingReason && <span className="flag"> {node.waitingFor ?? node.waitingReason}</span>}
                </div>
                <div role="cell">{node.poolId ?? '—'}</div>
                <div role="cell">{node.tenantId ?? '—'}</div>
                <div role="cell">
                  <time dateTime={node.updatedAt}>{new Date(node.updatedAt).toLocaleString()}</time>
                </div>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
