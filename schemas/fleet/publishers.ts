import { z } from 'zod';
import { aggregateRef } from '../aggregateRef.ts';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { ResourceId } from '../ids.ts';

/** Who publishes modules (a team, a vendor): the name a bundle's `manifest.sig` signs as. */
export const PublisherId = ResourceId;

/** A publisher's Ed25519 public key: 32 raw bytes, base64 (the approver keys' form). */
export const PublisherPublicKey = z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'must be a base64 32-byte Ed25519 public key');

/** A key a bundle may be signed with now: its publisher's current key, the publisher not revoked. */
export interface TrustedPublisherKey {
  readonly publisherId: string;
  readonly publicKey: string;
}

/**
 * `pki.registerPublisher`: trusts a new publisher's key. Keys must be points of the curve's prime-order subgroup
 * (small-order keys verify signatures that prove nothing and are refused).
 */
export const RegisterPublisher = z.object({ publisherId: PublisherId, publicKey: PublisherPublicKey }).strict();
export type RegisterPublisher = z.infer<typeof RegisterPublisher>;

/**
 * `pki.rotatePublisher`: replaces a publisher's key. From then on only the new key signs new versions; versions
 * already published stay published (their digest is on the log). A key the publisher used before is refused.
 */
export const RotatePublisher = z.object({ publisherId: PublisherId, publicKey: PublisherPublicKey }).strict();
export type RotatePublisher = z.infer<typeof RotatePublisher>;

/** `pki.revokePublisher`: trusts none of the publisher's keys any more, for good. */
export const RevokePublisher = z.object({ publisherId: PublisherId, reason: z.string().min(1).max(500) }).strict();
export type RevokePublisher = z.infer<typeof RevokePublisher>;

export const PublisherRegistered = defineEvent('PublisherRegistered', z.object({ publisherId: z.string(), publicKey: z.string() }));
export const PublisherKeyRotated = defineEvent(
  'PublisherKeyRotated',
  z.object({ publisherId: z.string(), publicKey: z.string(), previousPublicKey: z.string() }),
);
export const PublisherRevoked = defineEvent('PublisherRevoked', z.object({ publisherId: z.string(), reason: z.string() }));
export const publisherEvents = [PublisherRegistered, PublisherKeyRotated, PublisherRevoked] as const;
export type PublisherEvent = EventOf<(typeof publisherEvents)[number]>;

export interface PublisherRecord {
  readonly publicKey: string;
  /** Keys rotated out, oldest first: never trusted again, never registered again. */
  readonly retiredKeys: readonly string[];
  readonly revoked: boolean;
}

export interface PublishersState {
  readonly publishers: Readonly<Record<string, PublisherRecord>>;
}

/** The singleton id of the publishers aggregate (`bc.evt.fleet.publishers.all`). */
export const PUBLISHERS_ID = 'all';

/** What other modules read of the publisher set: module publishing checks bundles against it. */
export const publishersRef = aggregateRef<PublishersState>('fleet', 'publishers');

/** The keys a bundle may be signed with now. */
export const trustedPublisherKeys = (state: PublishersState): TrustedPublisherKey[] =>
  Object.entries(state.publishers)
    .filter(([, p]) => !p.revoked)
    .map(([publisherId, p]) => ({ publisherId, publicKey: p.publicKey }));
