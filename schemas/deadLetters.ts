import { z } from 'zod';

/**
 * Why a consumer set a message aside instead of acting on it:
 * - `MAC_MISSING`: no event-store MAC at all (a raw publish on `bc.evt.>`);
 * - `MAC_INVALID`: a MAC that does not verify (altered, moved to another subject or position, or under another key);
 * - `UNDECODABLE`: authentic bytes this build cannot read (not an event batch, or an event its schema refuses).
 */
export const QuarantineReason = z.enum(['MAC_MISSING', 'MAC_INVALID', 'UNDECODABLE']);
export type QuarantineReason = z.infer<typeof QuarantineReason>;

/** Why one message was refused: the reason code and a sentence for the operator (never message content). */
export const Rejection = z.object({ reason: QuarantineReason, detail: z.string() });
export type Rejection = z.infer<typeof Rejection>;

/**
 * A quarantined message, stored on `bc.dlq.<consumer>.<streamSeq>` (stream `BC_DEAD_LETTERS`, one entry per consumer
 * and position). The original stays where it was; the entry says where, why, and what it looked like.
 */
export const DeadLetter = Rejection.extend({
  /** The durable (or process) that refused it, e.g. `projector_nodes`, `workflow_orchestrator`. */
  consumer: z.string(),
  stream: z.string(),
  streamSeq: z.number().int().positive(),
  subject: z.string(),
  quarantinedAt: z.string(),
  payloadBytes: z.number().int().nonnegative(),
  payloadSha256: z.string(),
  /** The first 4 KiB of the payload as UTF-8, for a first look; the whole message is still in `stream` at `streamSeq`. */
  payloadHead: z.string(),
  /** Set once an operator marked it handled (`POST /v1/dead-letters/handle`): when, and the actor of the token. */
  handled: z.object({ at: z.string(), by: z.string() }).optional(),
});
export type DeadLetter = z.infer<typeof DeadLetter>;

/** What `GET /v1/dead-letters` answers: open (or, `handled=true`, handled) entries oldest first, each with its own position in `BC_DEAD_LETTERS`. */
export const DeadLetterPage = z.object({
  items: z.array(DeadLetter.extend({ seq: z.number().int().positive() })),
  /** Pass as `afterSeq` for the next page; absent on the last page. */
  nextAfterSeq: z.number().int().positive().optional(),
});
export type DeadLetterPage = z.infer<typeof DeadLetterPage>;
