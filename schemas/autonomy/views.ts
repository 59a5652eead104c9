import { z } from 'zod';
import { RemediationPlan } from './plan.ts';
import { Disposition, PolicyDeclaration } from './policies.ts';
import { Signal } from './signals.ts';

/** A decision as the `autonomy` read model serves it. */
export const DecisionView = z.object({
  decisionId: z.string(),
  category: z.string(),
  key: z.string(),
  owner: z.string(),
  episode: z.number().int(),
  status: z.enum(['pending', 'approved', 'running', 'notified', 'blocked', 'closed']),
  disposition: Disposition,
  dispositionReason: z.string().nullable(),
  approvedBy: z.string().nullable(),
  signal: Signal,
  plan: RemediationPlan,
  planDigest: z.string(),
  expiresAt: z.string().nullable(),
  approvals: z.array(z.string()),
  cooldownUntil: z.string().nullable(),
  settleUntil: z.string().nullable(),
  remediation: z.object({ commandName: z.string(), commandId: z.string() }).nullable(),
  lastOutcome: z.object({ effective: z.boolean(), signalPresent: z.boolean(), sensorOk: z.boolean() }).nullable(),
  ineffectiveStreak: z.number().int(),
  escalated: z.boolean(),
  closedReason: z.string().nullable(),
  openedAt: z.string(),
  updatedAt: z.string(),
});
export type DecisionView = z.infer<typeof DecisionView>;

/** One event of a decision's history. */
export const DecisionHistoryEntry = z.object({
  seq: z.number().int(),
  episode: z.number().int(),
  type: z.string(),
  actor: z.string(),
  time: z.string(),
  data: z.unknown(),
});
export type DecisionHistoryEntry = z.infer<typeof DecisionHistoryEntry>;

/** A scope's consent budget now: uses in the sliding window that ends now, and when the next is admitted once it is used up. */
export const BudgetView = z.object({
  budgetId: z.string(),
  scope: z.string(),
  windowMs: z.number().int(),
  limit: z.number().int(),
  consumed: z.number().int(),
  /** When a use leaves the window so the next is admitted; null while one is admitted now (or never, with limit 0). */
  nextFreeAt: z.string().nullable(),
});
export type BudgetView = z.infer<typeof BudgetView>;

/** A declared category with who declared it (a plugin's id, null when built in), the disposition in force and whether its owner is paused. */
export const PolicyView = PolicyDeclaration.extend({
  pluginId: z.string().nullable(),
  effectiveDisposition: Disposition,
  overridden: z.boolean(),
  paused: z.boolean(),
});
export type PolicyView = z.infer<typeof PolicyView>;

export const ControlsView = z.object({
  halted: z.boolean(),
  haltReason: z.string().nullable(),
  pausedOwners: z.array(z.string()),
  overrides: z.record(z.string(), Disposition),
});
export type ControlsView = z.infer<typeof ControlsView>;
