import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { Disposition } from './policies.ts';

/**
 * Legacy (fixed windows, before issue 31): budget taken in the window starting at `windowStart`, on that window's
 * aggregate. Still read from old logs, never written, and folded by nothing: those windows bound nothing now.
 */
export const BudgetConsumed = defineEvent(
  'BudgetConsumed',
  z.object({ budgetId: z.string(), scope: z.string(), windowStart: z.string(), limit: z.number().int(), decisionId: z.string(), episode: z.number().int() }),
);
/** Budget taken by one decision episode at `at`, under a sliding window of `windowMs` holding at most `limit`. */
export const BudgetTaken = defineEvent(
  'BudgetTaken',
  z.object({
    budgetId: z.string(),
    scope: z.string(),
    at: z.string(),
    windowMs: z.number().int(),
    limit: z.number().int(),
    decisionId: z.string(),
    episode: z.number().int(),
  }),
);
export const budgetEvents = [BudgetConsumed, BudgetTaken] as const;
export type BudgetEvent = EventOf<(typeof budgetEvents)[number]>;

/** An operator changed a category's disposition (null: back to the declared one). */
export const PolicyDispositionSet = defineEvent('PolicyDispositionSet', z.object({ category: z.string(), disposition: Disposition.nullable() }));
/** An owner's domain is paused (no new remediation starts) or resumed. */
export const OwnerPauseSet = defineEvent('OwnerPauseSet', z.object({ owner: z.string(), paused: z.boolean(), reason: z.string().nullable() }));
/** The kill switch: while halted no remediation starts anywhere. */
export const AutonomyHaltSet = defineEvent('AutonomyHaltSet', z.object({ halted: z.boolean(), reason: z.string().nullable() }));
export const controlEvents = [PolicyDispositionSet, OwnerPauseSet, AutonomyHaltSet] as const;
export type ControlEvent = EventOf<(typeof controlEvents)[number]>;

export const autonomyEvents = [...budgetEvents, ...controlEvents] as const;
