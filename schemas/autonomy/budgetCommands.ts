import { z } from 'zod';
import { DecisionId, Episode } from './decisionCommands.ts';

/** The longest budget window (`BC_AUTONOMY_BUDGET_WINDOW_MS`). */
export const BUDGET_WINDOW_MAX_MS = 7 * 86_400_000;
/**
 * How far back (before its latest use) a budget and its read model remember uses: the longest window and a day for
 * clocks that disagree. Anything older counts in no window any configuration allows, so forgetting it never
 * under-counts.
 */
export const BUDGET_REMEMBERED_MS = BUDGET_WINDOW_MAX_MS + 86_400_000;

/**
 * `autonomy.consumeBudget` (engine): one remediation of `scope`, admitted only while fewer than `limit` of the scope's
 * remediations were admitted in the `windowMs` before now (a sliding window: no span of that length ever holds more).
 */
export const ConsumeBudget = z
  .object({
    scope: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/),
    windowMs: z.number().int().min(1_000).max(BUDGET_WINDOW_MAX_MS),
    limit: z.number().int().nonnegative(),
    decisionId: DecisionId,
    episode: Episode,
  })
  .strict();
export type ConsumeBudget = z.infer<typeof ConsumeBudget>;
