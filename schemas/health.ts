import { z } from 'zod';
import { ServiceLeader } from './lease.ts';

/**
 * Why a running stack is less safe than it should be, as `/readyz` reports it. A warning never makes the stack
 * unready: it runs as configured, and says so. Codes are stable; `better-compute doctor` turns them into findings.
 */
export const ReadinessWarningCode = z.enum([
  /** `BC_NATS_AUTH=none`: anyone who reaches NATS reads every subject and may publish on any. */
  'BROKER_AUTH_OFF',
  /** `BC_API_AUTH=off`: every HTTP caller is an anonymous admin. */
  'API_AUTH_OFF',
]);
export type ReadinessWarningCode = z.infer<typeof ReadinessWarningCode>;

export const ReadinessWarning = z.object({ code: ReadinessWarningCode, message: z.string() });
export type ReadinessWarning = z.infer<typeof ReadinessWarning>;

/** The part of `/readyz` tools read: other fields may be added (and are kept by `passthrough`). */
export const Readiness = z
  .object({
    /** `ready` (HTTP 200); anything else is not ready (503). */
    status: z.string(),
    nats: z.boolean(),
    streamLastSeq: z.number(),
    projections: z.array(z.object({ projection: z.string(), checkpoint: z.number().nullable(), lag: z.number().nullable() })),
    warnings: z.array(ReadinessWarning),
    /** Messages moved to the dead-letter stream, when the stack reports them. */
    deadLetters: z.number().int().nonnegative().optional(),
    /** Who holds each leader lease (`null`: the lease bucket could not be read). */
    leaders: z.array(ServiceLeader).nullable().optional(),
  })
  .passthrough();
export type Readiness = z.infer<typeof Readiness>;
