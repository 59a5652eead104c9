import { z } from 'zod';
import { RefusalCount } from '../refusals.ts';

/**
 * Whose refusals a count covers, and the aggregate id it is kept under (`bc.evt.trust.refusals.<kind>`): `join`,
 * joins on `bc.join.<role>` (anyone holding the public join credential); `registration`, agents' registrations on
 * their own subjects; `results`, results the result intake refused (agents' publishes on `bc.site.<s>.res.>`).
 */
export const RefusalKind = z.enum(['join', 'registration', 'results']);
export type RefusalKind = z.infer<typeof RefusalKind>;

/**
 * `trust.countRefusals` (in-process only: the join and registration services, the result intake): refusals that left no
 * event of their own, counted per window (`services/platform/refusalTally.ts`).
 */
export const CountRefusals = RefusalCount.extend({ kind: RefusalKind }).strict();
export type CountRefusals = z.infer<typeof CountRefusals>;
