import { z } from 'zod';

/** The longest source name a count keeps (longer ones are cut: a source may be a name the refused party chose). */
export const COUNTED_SOURCE_MAX = 200;

/** Refusals of one source within a counted span, by reason (each reason an error code). */
export const CountedSource = z
  .object({
    /** Who or what was refused, as the refusing service names it (a claimed agent id, a NATS identity, a signer). */
    source: z.string().min(1).max(COUNTED_SOURCE_MAX),
    refused: z.number().int().positive(),
    reasons: z.record(z.string().max(64), z.number().int().positive()),
  })
  .strict();
export type CountedSource = z.infer<typeof CountedSource>;

/** Sources a count names at most; the refusals of any others are only summed (`otherSources`). */
export const COUNTED_SOURCES_MAX = 20;

/**
 * Refusals counted instead of recorded one by one: a refusal that leaves no event of its own is counted here, so the
 * log grows with time (one count per span), not with an attacker's attempts. `refused` is the sum over `sources`
 * plus `otherSources`. The span runs from the first to the last refusal it counts.
 */
export const RefusalCount = z
  .object({
    from: z.string().datetime(),
    to: z.string().datetime(),
    refused: z.number().int().positive(),
    /** The busiest sources, most refused first. */
    sources: z.array(CountedSource).max(COUNTED_SOURCES_MAX),
    /** Refusals of sources not listed. */
    otherSources: z.number().int().nonnegative(),
  })
  .strict();
export type RefusalCount = z.infer<typeof RefusalCount>;
