import { useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { InstanceView } from '../api/shapes.ts';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { instanceActionsFor, instancePayload, type InstanceAction } from './instanceActions.ts';

/**
 * An instance's verbs, each behind a confirmation; a refusal stays in the dialog with the API's problem code.
 * `onDone` gets the command's log position, so the list reads no older than it.
 */
export function InstanceActions({ instance, onDone }: { instance: InstanceView; onDone: (seq: number) => void }) {
  const { client, session } = useSignedIn();
  const actions = instanceActionsFor(session.role, instance);
  const [open, setOpen] = useState<{ action: InstanceAction; key: string } | null>(null);
  const [profile, setProfile] = useState('');
  const [allowDestructive, setAllowDestructive] = useState(false);
  if (actions.length === 0 && !open) return null;
  return (
    <div className="actions compact" role="group" aria-label={`Actions on ${instance.instanceId}`}>
      {actions.map((action) => (
        <button key={action.id} type="button" className={action.danger ? 'danger' : ''} onClick={() => setOpen({ action, key: crypto.randomUUID() })}>
          {action.label}
        </button>
      ))}
      {open && (
        <ConfirmDialog
          title={`${open.action.label} instance ${instance.instanceId}`}
          confirmLabel={open.action.label}
          danger={open.action.danger ?? false}
          onClose={() => setOpen(null)}
          onConfirm={async () =>
            onDone((await client.command(open.action.command, instancePayload(open.action, instance, { profile, allowDestructive }), open.key)).seq)
          }
        >
          <p>{open.action.consequence}</p>
          <p className="muted">
            Tenant {instance.tenantId}, pool {instance.poolId}, now {instance.state} (wanted {instance.desired}).
          </p>
          {open.action.id === 'remediate' && (
            <>
              <div className="field">
                <label htmlFor="remediate-profile">Profile</label>
                <input id="remediate-profile" required value={profile} maxLength={100} onChange={(e) => setProfile(e.target.value)} />
              </div>
              <label>
                <input type="checkbox" checked={allowDestructive} onChange={(e) => setAllowDestructive(e.target.checked)} /> Allow destructive steps
              </label>
            </>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
