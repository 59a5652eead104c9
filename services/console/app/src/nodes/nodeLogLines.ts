import type { NodeLogEntry } from '../api/shapes.ts';

/** Lines the panel keeps (oldest dropped): a long wipe's progress does not grow the page without end. */
export const NODE_LOG_LINES_KEPT = 2_000;

/** `lines` with `more` appended (a line already held, by sequence, is not repeated), the newest `kept` only. */
export function appendLines(lines: readonly NodeLogEntry[], more: readonly NodeLogEntry[], kept = NODE_LOG_LINES_KEPT): NodeLogEntry[] {
  const last = lines.at(-1)?.seq ?? 0;
  const next = [...lines, ...more.filter((l) => l.seq > last)];
  return next.length > kept ? next.slice(next.length - kept) : next;
}

/** Within this many pixels of the end counts as at the end (fractional scroll positions, zoom). */
const AT_END_SLACK_PX = 8;

/** Whether a scroll box shows its last line: the panel follows new lines only then. */
export const atEnd = (box: { scrollHeight: number; scrollTop: number; clientHeight: number }) =>
  box.scrollHeight - box.scrollTop - box.clientHeight <= AT_END_SLACK_PX;

/**
 * Whether the reader moved the box up from where the panel last pinned it to the end. A scroll event is dispatched at
 * the next frame, so new lines can render between the reader's scroll and the panel hearing of it: pinning to the end
 * then would undo the reader's move. Not at the end and above the pinned position means the reader moved (a box that
 * grew clamps its position down to the end, which is still the end).
 */
export const readerScrolledAway = (box: { scrollHeight: number; scrollTop: number; clientHeight: number }, pinnedTop: number) =>
  !atEnd(box) && box.scrollTop < pinnedTop - AT_END_SLACK_PX;
