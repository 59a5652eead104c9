import { useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { NodeView, WorkflowView } from '../api/shapes.ts';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { lastPowerReading } from './powerReading.ts';
import { powerActionsFor, powerPayload, type PowerAction } from './powerActions.ts';

/**
 * The machine's power as the BMC last reported it (from the node's workflows' power steps), and the power buttons
 * (operators, on an idle ready or deployed node), each behind a confirmation that shows the API's problem on refusal.
 */
export function NodePower({ node, workflows, onDone }: { node: NodeView; workflows: readonly WorkflowView[]; onDone: (seq: number) => void }) {
  const { client, session } = useSignedIn();
  const [open, setOpen] = useState<{ action: PowerAction; key: string } | null>(null);
  const reading = lastPowerReading(workflows);
  const actions = powerActionsFor(session.role, node);
  return (
    <section aria-labelledby="node-power" className="node-power">
      <h2 id="node-power">Power</h2>
      <p data-power={reading?.state ?? 'unknown'}>
        {reading ? (
          <>
            <strong>{reading.state}</strong>, as the BMC reported at <time dateTime={reading.at}>{new Date(reading.at).toLocaleString()}</time> (
            {reading.stepId} of {reading.workflowId})
          </>
        ) : (
          'Not read yet: no workflow of this node has read or set its power.'
        )}
      </p>
      {actions.length > 0 && (
        <div className="actions" role="group" aria-label="Power actions">
          {actions.map((action) => (
            <button key={action.id} type="button" className={action.destructive ? 'danger' : ''} onClick={() => setOpen({ action, key: crypto.randomUUID() })}>
              {action.label}
            </button>
          ))}
        </div>
      )}
      {open && (
        <ConfirmDialog
          title={`${open.action.label}: ${node.nodeId}`}
          confirmLabel={open.action.label}
          danger={open.action.destructive}
          onClose={() => setOpen(null)}
          onConfirm={async () => onDone((await client.command('metal.remediate', powerPayload(open.action, node.nodeId), open.key)).seq)}
        >
          <p>{open.action.consequence}</p>
          <p className="muted">
            Runs as a <code>remediate</code> workflow with the <code>{open.action.profile}</code> profile; the node returns to {node.state} after it.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
