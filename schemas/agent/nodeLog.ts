import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { AgentCommandId } from './agentCommand.ts';

/**
 * Who printed a line: the site agent (BMC work for the node), the ramdisk inside it, an installed host's `bcd node`,
 * or the machine's serial console (relayed by the site agent where the BMC or the emulated site provides it).
 */
export const NodeLogSource = z.enum(['site-agent', 'ramdisk', 'node-agent', 'serial']);
export type NodeLogSource = z.infer<typeof NodeLogSource>;

/** `progress` lines replace one another in a reader's eye (a percentage); `stdout`/`stderr` are output to keep. */
export const NodeLogStream = z.enum(['stdout', 'stderr', 'progress']);
export type NodeLogStream = z.infer<typeof NodeLogStream>;

/** The longest text of one line; an agent cuts longer output (`capLogText`) rather than send it. */
export const NODE_LOG_TEXT_MAX = 2_000;

/**
 * One line of a node's log, as an agent publishes it on `bc.site.<siteId>.log.<nodeId>.<source>` (BC_LOGS).
 *
 * Secrets never travel here: agents write only what they decided to say (a command's kind and id, its exit, the
 * progress they compute, a tool's output), never a command's params, a credential, a token or a result payload.
 * The broker lets an agent publish only on its own site's or node's subjects, and a reader takes `nodeId` and
 * `source` from the subject it was stored on, not from this body: an agent chooses what it says, not whose it is.
 */
export const NodeLogLine = z
  .object({
    nodeId: ResourceId,
    source: NodeLogSource,
    commandId: AgentCommandId.optional(),
    stream: NodeLogStream,
    at: z.iso.datetime(),
    text: z.string().max(NODE_LOG_TEXT_MAX),
  })
  .strict();
export type NodeLogLine = z.infer<typeof NodeLogLine>;

/** A stored line as the API shows it: `seq` (the BC_LOGS sequence, to resume after) and `storedAt` (the broker's clock). */
export const NodeLogEntry = NodeLogLine.extend({ seq: z.number().int().positive(), storedAt: z.iso.datetime() });
export type NodeLogEntry = z.infer<typeof NodeLogEntry>;

export const NodeLogPage = z.object({
  items: z.array(NodeLogEntry),
  /** The last sequence read (pass it as `since` to read on), or the `since` asked for when nothing was newer. */
  lastSeq: z.number().int().nonnegative(),
});
export type NodeLogPage = z.infer<typeof NodeLogPage>;

const ELLIPSIS = ' …[cut]';
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

/**
 * Text with every URL replaced by `<url>`: a blob URL is a capability and an image or BMC URL may carry a token or a
 * password, and an error message an agent passes on may quote one. Agents apply it to every line they send.
 */
export function withoutUrls(text: string): string {
  return text.replace(URL_PATTERN, '<url>');
}

/** Text cut to `NODE_LOG_TEXT_MAX` characters, saying so, so no line is refused for its length. */
export function capLogText(text: string): string {
  return text.length <= NODE_LOG_TEXT_MAX ? text : `${text.slice(0, NODE_LOG_TEXT_MAX - ELLIPSIS.length)}${ELLIPSIS}`;
}
