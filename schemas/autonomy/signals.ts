import { z } from 'zod';

/** A natural key: what one decision is about (a node, an instance, an agent, a workflow, a site). */
export const NaturalKey = z.string().regex(/^[a-z0-9][a-z0-9_.:-]{0,120}$/, 'must be a subject-safe natural key');

export const SignalTarget = z.object({ type: z.enum(['node', 'instance', 'agent', 'workflow', 'site']), id: z.string().min(1).max(128) }).strict();
export type SignalTarget = z.infer<typeof SignalTarget>;

/**
 * What a sensor saw, for one natural key in one pass. Signals are not events: they travel on `BC_SIGNALS` and only a
 * change they cause (a new decision, an outcome) reaches the log.
 */
export const Signal = z
  .object({
    /** What was seen, e.g. `bmc-unreachable`; a binding maps it to an intervention category. */
    kind: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/),
    /** The sensor that emitted it. */
    sensor: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/),
    key: NaturalKey,
    target: SignalTarget,
    siteId: z.string().max(63).nullable(),
    /** Structured facts a binding resolves its plan from (e.g. the failed `operation`). */
    facts: z.record(z.string(), z.string().max(200)),
    /** Human text; never secrets. */
    detail: z.string().max(400),
    /** The target is one of the control plane's own machines: no decision may act on it. */
    controlPlane: z.boolean(),
  })
  .strict();
export type Signal = z.infer<typeof Signal>;

/** One sensor's part of a pass: ok with how much it assessed, or failed with its error. */
export const SensorReport = z.discriminatedUnion('ok', [
  z.object({ sensor: z.string(), ok: z.literal(true), assessed: z.number().int().nonnegative(), signals: z.number().int().nonnegative() }).strict(),
  z.object({ sensor: z.string(), ok: z.literal(false), error: z.string().max(400) }).strict(),
]);
export type SensorReport = z.infer<typeof SensorReport>;

/**
 * The marker that closes a pass. The pass's signals were published before it on `bc.sig.signal.<passId>.<n>`; the
 * marker names how many, so the engine knows it read them all.
 */
export const PassMarker = z
  .object({
    passId: z.string().regex(/^[a-z0-9-]{1,64}$/),
    at: z.string().datetime(),
    sensors: z.array(SensorReport),
    signalCount: z.number().int().nonnegative(),
  })
  .strict();
export type PassMarker = z.infer<typeof PassMarker>;

/** A signal as published: which pass it belongs to. */
export const PublishedSignal = z.object({ passId: z.string(), index: z.number().int().nonnegative(), signal: Signal }).strict();
export type PublishedSignal = z.infer<typeof PublishedSignal>;
