import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * An identifier that is safe as one NATS subject token: lower-case letters, digits, `-` and `_`, no dots or
 * wildcards, so `bc.evt.metal.node.<id>` always names exactly one aggregate.
 */
export const ResourceId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be 1-63 chars of a-z, 0-9, "-" or "_", starting with a letter or digit');
export type ResourceId = z.infer<typeof ResourceId>;

/** A command id: the client's idempotency key, also the JetStream `Nats-Msg-Id` of the appended message. */
export const CommandId = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8-64 chars of A-Z, a-z, 0-9, "-" or "_"');
export type CommandId = z.infer<typeof CommandId>;

/** A reference to a sealed secret (`secret:<id>`); plaintext credentials are never accepted where one is expected. */
export const SecretRef = z.string().regex(/^secret:[a-z0-9][a-z0-9_-]{0,62}$/, 'must be a secret reference like secret:bmc-r1-n1');

/**
 * A deterministic command id for a command a process manager sends in reaction to an event: the same reaction to
 * the same event (a redelivery, a replay after a restart) gets the same id, so the command bus deduplicates it.
 */
export function idFor(prefix: string, key: string): string {
  return `${prefix}-${createHash('sha256').update(key).digest('hex').slice(0, 24)}`;
}
