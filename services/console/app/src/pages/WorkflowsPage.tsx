import { useState } from 'react';
import { Link } from 'wouter';
import { useSignedIn } from '../api/apiContext.tsx';
import type { WorkflowView } from '../api/shapes.ts';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { StateBadge } from '../components/StateBadge.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { WorkflowSteps } from '../workflows/WorkflowSteps.tsx';
import { TableHead } from '../components/TableHead.tsx';

const states = ['', 'running', 'cancelling', 'completed', 'failed', 'cancelled'] as const;

/** Workflows across the fleet, newest first: running ones with their steps live, failed ones with their codes. */
export function WorkflowsPage() {
  const { client } = useSignedIn();
  const [state, setState] = useState<(typeof states)[number]>('');
  const [pages, setPages] = useState<string[]>([]);
  const cursor = pages.at(-1) ?? null;
  const list = useResource(`workflows:${state}:${cursor ?? ''}`, (minSeq, signal) => client.workflows({ state, cursor, minSeq }, signal));
  useLiveReload(list, subjectOf.anyWorkflow);
  const [expanded, setExpanded] = useState<string | null>(null);

  return (
    <section aria-labelledby="workflows-title">
      <h1 id="workflows-title">Workflows</h1>
      <form className="filters" aria-label="Filter workflows" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="workflow-state">State</label>
          <select
            id="workflow-state"
            value={state}
            onChange={(e) => {
              setState(e.target.value as (typeof states)[number]);
              setPages([]);
            }}
          >
            {states.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
              </option>
            ))}
          </select>
        </div>
      </form>
      <ProblemAlert error={list.error} />
      <div className="table-scroll">
        <table className="workflows">
          <TableHead caption="Workflows, newest first" columns={['Workflow', 'Node', 'Operation', 'State', 'Progress', 'Started']} />
          <tbody>
            {list.data?.items.map((w) => (
              <WorkflowRow
                key={w.workflowId}
                workflow={w}
                expanded={expanded === w.workflowId}
                onToggle={() => setExpanded(expanded === w.workflowId ? null : w.workflowId)}
              />
            ))}
          </tbody>
        </table>
      </div>
      <div className="pager">
        <button type="button" disabled={pages.length === 0} onClick={() => setPages(pages.slice(0, -1))}>
          Newer
        </button>
        <button type="button" disabled={!list.data?.nextCursor} onClick={() => list.data?.nextCursor && setPages([...pages, list.data.nextCursor])}>
          Older
        </button>
      </div>
    </section>
  );
}

function WorkflowRow({ workflow: w, expanded, onToggle }: { workflow: WorkflowView; expanded: boolean; onToggle: () => void }) {
  const done = w.steps.filter((s) => s.state === 'succeeded').length;
  const failed = w.steps.find((s) => s.state === 'failed');
  return (
    <>
      <tr data-workflow={w.workflowId}>
        <td>
          <button type="button" aria-expanded={expanded} onClick={onToggle} aria-label={`Steps of ${w.workflowId}`}>
            {expanded ? '▾' : '▸'}
          </button>{' '}
          <Link href={`/workflows/${w.workflowId}`}>{w.workflowId}</Link>
        </td>
        <td>
          <Link href={`/nodes/${encodeURIComponent(w.nodeId)}`}>{w.nodeId}</Link>
        </td>
        <td>{w.operation}</td>
        <td>
          <StateBadge state={w.state} />
          {failed?.errorCode && <strong className="problem-inline"> {failed.errorCode}</strong>}
        </td>
        <td>
          {done}/{w.steps.length}
        </td>
        <td>
          <time dateTime={w.startedAt}>{new Date(w.startedAt).toLocaleString()}</time>
        </td>
      </tr>
      {expanded && (
        <tr>
          <td colSpan={6}>
            <WorkflowSteps workflow={w} />
          </td>
        </tr>
      )}
    </>
  );
}
