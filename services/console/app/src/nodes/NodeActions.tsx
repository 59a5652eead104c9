import { useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { NodeView } from '../api/shapes.ts';
import { useResource } from '../api/useResource.ts';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { DeployFields, deployPayload, type DeployChoice } from './DeployFields.tsx';
import { actionPayload, actionsFor, asksReason, type NodeAction } from './nodeActions.ts';

/**
 * The verbs this token may use on this node now, each behind a confirmation; none at all for a viewer or approver.
 * `onDone` gets the log position of the command, so the page can read no older than it.
 */
export function NodeActions({ node, onDone }: { node: NodeView; onDone: (seq: number) => void }) {
  const { client, session } = useSignedIn();
  const actions = actionsFor(session.role, node);
  const [open, setOpen] = useState<{ action: NodeAction; key: string } | null>(null);
  if (actions.length === 0) return null;
  return (
    <div className="actions" role="group" aria-label="Node actions">
      {actions.map((action) => (
        <button key={action.id} type="button" className={action.danger ? 'danger' : ''} onClick={() => setOpen({ action, key: crypto.randomUUID() })}>
          {action.label}
        </button>
      ))}
      {open && open.action.id === 'deploy' && (
        <DeployDialog action={open.action} node={node} idempotencyKey={open.key} onClose={() => setOpen(null)} onDone={onDone} />
      )}
      {open && open.action.id !== 'deploy' && (
        <ActionDialog
          action={open.action}
          node={node}
          onClose={() => setOpen(null)}
          send={async (payload) => onDone((await client.command(open.action.command, payload, open.key)).seq)}
        />
      )}
    </div>
  );
}

function ActionDialog({ action, node, onClose, send }: { action: NodeAction; node: NodeView; onClose: () => void; send: (payload: object) => Promise<void> }) {
  const [reason, setReason] = useState('');
  const payload = actionPayload(action, node.nodeId, reason);
  return (
    <ConfirmDialog
      title={`${action.label}: ${node.nodeId}`}
      confirmLabel={action.label}
      danger={action.danger ?? false}
      onClose={onClose}
      onConfirm={() => send(payload)}
    >
      <p>{action.consequence}</p>
      {asksReason(action) && (
        <div className="field">
          <label htmlFor="action-reason">Reason</label>
          <input id="action-reason" value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} />
        </div>
      )}
    </ConfirmDialog>
  );
}

function DeployDialog({
  action,
  node,
  idempotencyKey,
  onClose,
  onDone,
}: {
  action: NodeAction;
  node: NodeView;
  idempotencyKey: string;
  onClose: () => void;
  onDone: (seq: number) => void;
}) {
  const { client, session } = useSignedIn();
  // A tenant may not list profiles: it deploys with the built-in one.
  const profiles = useResource('profiles', (_minSeq, signal) => (session.role === 'tenant' ? Promise.resolve({ items: [] }) : client.profiles(signal)));
  const deployProfiles = profiles.data?.items.filter((p) => p.role === 'deploy') ?? [];
  const [choice, setChoice] = useState<DeployChoice>({ profileId: 'deploy', role: 'host', sshKeys: '', inputs: {} });
  return (
    <ConfirmDialog
      title={`Deploy ${node.nodeId}`}
      confirmLabel="Deploy"
      onClose={onClose}
      onConfirm={async () => onDone((await client.command('metal.deploy', deployPayload(node.nodeId, choice), idempotencyKey)).seq)}
    >
      <p>{action.consequence}</p>
      <DeployFields profiles={deployProfiles} choice={choice} onChange={setChoice} />
    </ConfirmDialog>
  );
}
