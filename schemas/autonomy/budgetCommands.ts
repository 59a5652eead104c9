import { z } from 'zod';
import { DecisionId, Episode } from './decisionCommands.ts';

/** `autonomy.consumeBudget` (engine): one remediation of `scope` in the window starting at `windowStart`. */
export const ConsumeBudget = z
  .object({
    scope: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/),
    windowStart: z.string().datetime(),
    limit: z.number().int().nonnegative(),
    decisionId: DecisionId,
    episode: Episode,
  })
  .strict();
export type ConsumeBudget = z.infer<typeof ConsumeBudget>;
