import { useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { RolloutView } from '../api/shapes.ts';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { rolloutActionsFor, type RolloutAction } from './rolloutActions.ts';

/**
 * The verbs this token may send on the rollout in its status now, each behind a confirmation; none for a viewer or
 * approver. A refusal (a rollback while a host has not reported, a status changed meanwhile) stays in the dialog with
 * its problem code. `onDone` gets the log position of the command, so the page reads no older than it.
 */
export function RolloutActions({ rollout, onDone }: { rollout: RolloutView; onDone: (seq: number) => void }) {
  const { client, session } = useSignedIn();
  const actions = rolloutActionsFor(session.role, rollout.status);
  const [open, setOpen] = useState<{ action: RolloutAction; key: string } | null>(null);
  if (actions.length === 0) return null;
  return (
    <div className="actions" role="group" aria-label="Rollout actions">
      {actions.map((action) => (
        <button key={action.verb} type="button" className={action.danger ? 'danger' : ''} onClick={() => setOpen({ action, key: crypto.randomUUID() })}>
          {action.label}
        </button>
      ))}
      {open && (
        <ConfirmDialog
          title={`${open.action.label}: rollout ${rollout.rolloutId}`}
          confirmLabel={open.action.label}
          danger={open.action.danger}
          onClose={() => setOpen(null)}
          onConfirm={async () => onDone((await client.rolloutVerb(rollout.rolloutId, open.action.verb, open.key)).seq)}
        >
          <p>
            {rollout.module} {rollout.fromVersion} → {rollout.toVersion} is {rollout.status}. {open.action.consequence}
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
