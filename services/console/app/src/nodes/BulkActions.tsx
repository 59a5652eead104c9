import { useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import { ApiError } from '../api/client.ts';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { actionPayload, asksReason, bulkActionsFor, bulkPlan, type ActionableNode, type NodeAction } from './nodeActions.ts';

/** How many commands of a bulk action are in flight at once: fast on a large selection, gentle on the API. */
const inFlight = 4;

/**
 * Actions on the selected nodes with one confirmation: the dialog says which nodes the action applies to and which it
 * skips (not offered in their state), then sends one command per node and reports what the API refused, by code.
 */
export function BulkActions({ selected, onDone }: { selected: readonly ActionableNode[]; onDone: (report: string) => void }) {
  const { session } = useSignedIn();
  const [open, setOpen] = useState<NodeAction | null>(null);
  const actions = bulkActionsFor(session.role, selected);
  return (
    <div className="bulk" role="group" aria-label="Bulk actions">
      <span>{selected.length} selected</span>
      {actions.map((action) => (
        <button key={action.id} type="button" className={action.danger ? 'danger' : ''} onClick={() => setOpen(action)}>
          {action.label}…
        </button>
      ))}
      {open && <BulkDialog action={open} nodes={selected} onClose={() => setOpen(null)} onSent={onDone} />}
    </div>
  );
}

function BulkDialog({
  action,
  nodes,
  onClose,
  onSent,
}: {
  action: NodeAction;
  nodes: readonly ActionableNode[];
  onClose: () => void;
  onSent: (report: string) => void;
}) {
  const { client, session } = useSignedIn();
  const [reason, setReason] = useState('');
  const { applies, skipped } = bulkPlan(session.role, action, nodes);
  const send = async () => {
    const refused: string[] = [];
    const queue = [...applies];
    const worker = async () => {
      for (let node = queue.shift(); node; node = queue.shift()) {
        await client.command(action.command, actionPayload(action, node.nodeId, reason), crypto.randomUUID()).catch((err: unknown) => {
          refused.push(`${node.nodeId}: ${err instanceof ApiError ? err.code : 'INTERNAL'}`);
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(inFlight, applies.length) }, worker));
    onSent(`${action.label}: ${applies.length - refused.length} sent${refused.length ? `, ${refused.length} refused (${refused.join(', ')})` : ''}`);
  };
  return (
    <ConfirmDialog
      title={`${action.label} on ${applies.length} node${applies.length === 1 ? '' : 's'}`}
      confirmLabel={action.label}
      danger={action.danger ?? false}
      onClose={onClose}
      onConfirm={send}
    >
      <p>{action.consequence}</p>
      <p>
        Applies to: <span data-applies>{applies.map((n) => n.nodeId).join(', ')}</span>
      </p>
      {skipped.length > 0 && <p>Skipped (not offered in their state): {skipped.map((n) => n.nodeId).join(', ')}</p>}
      {asksReason(action) && (
        <div className="field">
          <label htmlFor="bulk-reason">Reason</label>
          <input id="bulk-reason" value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} />
        </div>
      )}
    </ConfirmDialog>
  );
}
