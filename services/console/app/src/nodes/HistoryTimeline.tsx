import { useEffect, useId, useRef, useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { NodeHistory } from '../api/shapes.ts';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { StateBadge } from '../components/StateBadge.tsx';
import { NodeFacts } from './NodeFacts.tsx';

/** `datetime-local` speaks local wall-clock time (to the millisecond, with `step` 0.001); the API takes ISO instants. */
const toLocalInput = (iso: string) => {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 23);
};
const fromLocalInput = (local: string) => new Date(local).toISOString();

/**
 * The node's history from the log: every batch of its events with the state it left, and the node as it was at any
 * instant picked (a batch of the timeline, or any time typed in), folded by the API from the events up to then.
 */
export function HistoryTimeline({ nodeId, latestSeq }: { nodeId: string; latestSeq: number }) {
  const { client } = useSignedIn();
  const id = useId();
  const [at, setAt] = useState<string | null>(null);
  const [typed, setTyped] = useState('');
  const history = useResource(`${nodeId}@${at ?? 'now'}`, (_minSeq, signal) => client.nodeHistory(nodeId, at ?? undefined, signal));
  // The timeline grows with the node: read it again whenever the node moves on (the log is always current).
  const { reload } = history;
  const seenSeq = useRef(latestSeq);
  useEffect(() => {
    if (seenSeq.current === latestSeq) return;
    seenSeq.current = latestSeq;
    reload();
  }, [latestSeq, reload]);
  const data: NodeHistory | undefined = history.data;

  return (
    <section aria-labelledby={`${id}-title`} className="history">
      <h2 id={`${id}-title`}>History</h2>
      <form
        className="history-pick"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed) setAt(fromLocalInput(typed));
        }}
      >
        <label htmlFor={`${id}-at`}>Show the node at</label>
        <input id={`${id}-at`} type="datetime-local" step={0.001} value={typed} onChange={(e) => setTyped(e.target.value)} />
        <button type="submit" disabled={!typed}>
          Show
        </button>
        <button type="button" onClick={() => setAt(null)} disabled={at === null}>
          Now
        </button>
      </form>
      <ProblemAlert error={history.error} />
      {data && (
        <div className="history-body">
          <ol className="timeline" aria-label="Timeline of the node's events">
            {data.timeline.map((entry) => {
              const selected = entry.seq === data.at.seq;
              return (
                <li key={entry.seq} className={selected ? 'selected' : ''}>
                  <button
                    type="button"
                    aria-pressed={selected}
                    onClick={() => {
                      setAt(String(entry.seq));
                      setTyped(toLocalInput(entry.time));
                    }}
                  >
                    <time dateTime={entry.time}>{new Date(entry.time).toLocaleString()}</time> <StateBadge state={entry.state} /> {entry.events.join(', ')}
                  </button>
                </li>
              );
            })}
          </ol>
          <div className="history-snapshot" aria-live="polite">
            <h3>
              At <time dateTime={data.at.time}>{new Date(data.at.time).toLocaleString()}</time> (log position {data.at.seq}):{' '}
              <span data-testid="history-state">
                <StateBadge state={data.node.state} />
              </span>
            </h3>
            {data.node.operation && (
              <p>
                Operation: {data.node.operation} (workflow {data.node.workflowId})
              </p>
            )}
            {data.node.maintenance && <p>In maintenance: {data.node.maintenanceReason}</p>}
            {data.node.failure && (
              <p>
                Failed{data.node.failure.failedStep ? ` at ${data.node.failure.failedStep}` : ''}: {data.node.failure.reason}
              </p>
            )}
            <NodeFacts node={data.node} />
          </div>
        </div>
      )}
    </section>
  );
}
