import { useId, useLayoutEffect, useRef, useState } from 'react';
import { atEnd, readerScrolledAway } from './nodeLogLines.ts';
import { useNodeLogs } from './useNodeLogs.ts';

/**
 * What the node's agents print (site agent, ramdisk, node agent, serial console), live. It keeps to the newest line
 * while the reader is at the end; scrolling up stops that (a line read is not pulled away), and "Follow" resumes it.
 */
export function NodeLogs({ nodeId }: { nodeId: string }) {
  const id = useId();
  const { lines, status } = useNodeLogs(nodeId);
  const box = useRef<HTMLDivElement>(null);
  const [following, setFollowing] = useState(true);
  const pinnedTop = useRef(0);

  const pinToEnd = (el: HTMLDivElement) => {
    el.scrollTop = el.scrollHeight;
    pinnedTop.current = el.scrollTop;
  };

  useLayoutEffect(() => {
    const el = box.current;
    if (!following || !el) return;
    if (readerScrolledAway(el, pinnedTop.current)) return setFollowing(false);
    pinToEnd(el);
  }, [lines, following]);

  const follow = () => {
    if (box.current) pinToEnd(box.current);
    setFollowing(true);
  };

  return (
    <section aria-labelledby={`${id}-title`} className="node-logs">
      <h2 id={`${id}-title`}>
        Logs <span className="live-status">{status === 'live' ? 'live' : status}</span>
      </h2>
      <div ref={box} className="log-lines" role="log" aria-labelledby={`${id}-title`} tabIndex={0} onScroll={(e) => setFollowing(atEnd(e.currentTarget))}>
        {lines.length === 0 && <p className="log-empty">No lines yet: agents print here while they work on the node.</p>}
        {lines.map((line) => (
          <div key={line.seq} className={`log-line log-${line.stream}`}>
            <time dateTime={line.at}>{new Date(line.at).toLocaleTimeString()}</time> <span className="log-source">{line.source}</span>{' '}
            <span className="log-text">{line.text}</span>
          </div>
        ))}
      </div>
      {!following && (
        <button type="button" onClick={follow}>
          Follow new lines
        </button>
      )}
    </section>
  );
}
