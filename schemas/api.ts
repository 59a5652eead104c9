import { z } from 'zod';
import { ErrorCodes, type ErrorCode } from './errorCodes.ts';

/** What a command answers over HTTP and NATS alike. `duplicate` is true when the command id was already applied. */
export const CommandResult = z.object({
  commandId: z.string(),
  aggregate: z.object({ type: z.string(), id: z.string() }),
  seq: z.number().int().nonnegative(),
  duplicate: z.boolean(),
  events: z.array(z.object({ type: z.string(), version: z.number().int(), data: z.unknown() })),
});
export type CommandResult = z.infer<typeof CommandResult>;

/** RFC 9457 problem details with the platform's stable `code`. */
export const Problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  code: z.enum(Object.keys(ErrorCodes) as [ErrorCode, ...ErrorCode[]]),
  detail: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  instance: z.string().optional(),
});
export type Problem = z.infer<typeof Problem>;

/** Cursor pagination: pass `nextCursor` back as `cursor` until it is null. */
export const pageOf = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });

/** Read-your-writes: wait (bounded) until the read model has applied this stream sequence; one beyond the log's end is 400 `MIN_SEQ_AHEAD`. */
export const MinSeqQuery = z.object({ minSeq: z.coerce.number().int().nonnegative().optional() });
