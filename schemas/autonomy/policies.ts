import { z } from 'zod';

/** What happens when a signal binds to a category: act, tell, ask, or refuse. */
export const Disposition = z.enum(['auto', 'notify', 'require', 'block']);
export type Disposition = z.infer<typeof Disposition>;

export const Category = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/);
export const Owner = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/);

/**
 * An intervention category, declared once. `advancement` categories (remediations that move the fleet forward rather
 * than back to health) cool down longer after a rejection or timeout.
 */
export const PolicyDeclaration = z
  .object({
    category: Category,
    owner: Owner,
    disposition: Disposition,
    kind: z.enum(['destructive', 'advisory']),
    advancement: z.boolean(),
    /** How long an approval request waits before it is rejected (the owner's chain timeout). */
    approvalTimeoutMs: z.number().int().positive(),
    description: z.string().max(300),
    /** Cooldown after a rejection or timeout; default 1 h, 4 h for advancement categories. */
    cooldownMs: z.number().int().positive().optional(),
  })
  .strict();
export type PolicyDeclaration = z.infer<typeof PolicyDeclaration>;

export const HOUR_MS = 3_600_000;
/** Cooldown after a rejection or a timeout: 1 h, 4 h for advancement categories. */
export const cooldownMsOf = (policy: Pick<PolicyDeclaration, 'advancement' | 'cooldownMs'>) =>
  policy.cooldownMs ?? (policy.advancement ? 4 * HOUR_MS : HOUR_MS);
