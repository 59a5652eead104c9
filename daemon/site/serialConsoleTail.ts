import { open, stat } from 'node:fs/promises';
import type { NodeLogPublisher } from '../agent/nodeLogPublisher.ts';

/** How often a serial log file is checked for new output. */
const POLL_MS = 500;
/** The most read at once: a console that printed a lot while unwatched is caught up in pieces. */
const READ_MAX = 64 << 10;
/** A line with no newline yet is sent once it grows this long, so a console that never ends a line still shows. */
const PARTIAL_MAX = 1_000;

/** Terminal escapes (colours, cursor moves) and control characters but tab: what a serial console prints besides text. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-_]|[\u0000-\u0008\u000b-\u001f\u007f]/g;

export interface SerialTail {
  stop(): Promise<void>;
}

/**
 * Follows one machine's serial console where the BMC or the emulated site writes it to a file (QEMU's `-serial
 * file:…`), sending each line to the node's log as `serial` lines through `logs` (rate-limited like every agent line).
 * It starts at the file's end (an earlier boot's output is not replayed), and starts over when the file is cut
 * (a new power-on truncating it). Best effort: a missing or unreadable file is tried again at the next poll.
 */
export function tailSerialConsole(path: string, nodeId: string, logs: Pick<NodeLogPublisher, 'say'>, pollMs = POLL_MS): SerialTail {
  let offset: number | undefined;
  let partial = '';
  let stopped = false;
  const say = (text: string) => {
    const clean = text.replace(CONTROL, '').trimEnd();
    if (clean !== '') logs.say({ nodeId, stream: 'stdout', text: clean });
  };
  const poll = async () => {
    const size = await stat(path).then(
      (s) => s.size,
      () => undefined,
    );
    if (size === undefined) return;
    if (offset === undefined || size < offset) {
      // First sight: from the end. Cut short: the machine started over, and so does the tail.
      offset = offset === undefined ? size : 0;
      partial = '';
      if (size === offset) return;
    }
    if (size === offset) return;
    const handle = await open(path, 'r');
    try {
      const buf = Buffer.alloc(Math.min(READ_MAX, size - offset));
      const { bytesRead } = await handle.read(buf, 0, buf.length, offset);
      offset += bytesRead;
      const lines = (partial + buf.subarray(0, bytesRead).toString('utf8')).split(/\r?\n|\r/);
      partial = lines.pop() ?? '';
      for (const line of lines) say(line);
      if (partial.length >= PARTIAL_MAX) {
        say(partial);
        partial = '';
      }
    } finally {
      await handle.close();
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await poll().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
