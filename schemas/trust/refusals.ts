import { z } from 'zod';
import { RefusalCount } from '../refusals.ts';

/**
 * Whose refusals a count covers, and the aggregate id it is kept under (`bc.evt.trust.refusals.<kind>`): `join`,
 * joins on `bc.join.<role>` (anyone holding the public join credential); `registration`, agents' registrations on
 * their own subjects.
 */
export const RefusalKind = z.enum(['join', 'registration']);
export type RefusalKind = z.infer<typeof RefusalKind>;

/**
 * `trust.countRefusals` (the join process only: its join and registration services): refusals that left no event of
 * their own, counted per window (`services/platform/refusalTally.ts`).
 */
export const CountRefusals = RefusalCount.extend({ kind: RefusalKind }).strict();
export type CountRefusals = z.infer<typeof CountRefusals>;
