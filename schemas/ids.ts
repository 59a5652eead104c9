import { z } from 'zod';

/**
 * An identifier that is safe as one NATS subject token: lower-case letters, digits, `-` and `_`, no dots or
 * wildcards, so `bc.evt.metal.node.<id>` always names exactly one aggregate.
 */
export const ResourceId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be 1-63 chars of a-z, 0-9, "-" or "_", starting with a letter or digit');
export type ResourceId = z.infer<typeof ResourceId>;

/** A command id: the client's idempotency key, also the JetStream `Nats-Msg-Id` of the appended message. */
export const CommandId = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8-64 chars of A-Z, a-z, 0-9, "-" or "_"');
export type CommandId = z.infer<typeof CommandId>;

/** A reference to a sealed secret (`secret:<id>`); plaintext credentials are never accepted where one is expected. */
export const SecretRef = z.string().regex(/^secret:[a-z0-9][a-z0-9_-]{0,62}$/, 'must be a secret reference like secret:bmc-r1-n1');
