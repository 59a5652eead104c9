import { unusableEd25519Key } from '../../../schemas/ed25519.ts';
import {
  PUBLISHERS_ID,
  RegisterPublisher,
  RevokePublisher,
  RotatePublisher,
  type PublisherEvent,
  type PublishersState,
} from '../../../schemas/fleet/publishers.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { publishersAggregate } from './publishers.ts';

function usableKey(publisherId: string, publicKey: string): void {
  const unusable = unusableEd25519Key(publicKey);
  if (unusable) throw new DomainError('VALIDATION_FAILED', `publisher ${publisherId}: ${unusable}`);
}

/** A key any publisher holds or held: one key signs for one publisher, and a retired key is never trusted again. */
function keyInUse(state: PublishersState, publicKey: string): string | undefined {
  return Object.entries(state.publishers).find(([, p]) => p.publicKey === publicKey || p.retiredKeys.includes(publicKey))?.[0];
}

function live(state: PublishersState, publisherId: string) {
  const publisher = state.publishers[publisherId];
  if (!publisher) throw new DomainError('NOT_FOUND', `no publisher ${publisherId}`);
  if (publisher.revoked) throw new DomainError('ILLEGAL_TRANSITION', `publisher ${publisherId} is revoked`);
  return publisher;
}

/** `pki.registerPublisher`: trusts a new publisher's key; the same registration again is a no-op. */
export const registerPublisher = defineCommand({
  name: 'pki.registerPublisher',
  exposure: ['admin'],
  schema: RegisterPublisher,
  aggregate: publishersAggregate,
  aggregateId: () => PUBLISHERS_ID,
  decide(command, state): PublisherEvent[] {
    const existing = state.publishers[command.publisherId];
    if (existing && !existing.revoked && existing.publicKey === command.publicKey) return [];
    if (existing?.revoked) throw new DomainError('ILLEGAL_TRANSITION', `publisher ${command.publisherId} is revoked for good`);
    if (existing) throw new DomainError('ALREADY_EXISTS', `publisher ${command.publisherId} is registered (rotate its key with pki.rotatePublisher)`);
    usableKey(command.publisherId, command.publicKey);
    const holder = keyInUse(state, command.publicKey);
    if (holder) throw new DomainError('ALREADY_EXISTS', `the key is (or was) publisher ${holder}'s`);
    return [{ type: 'PublisherRegistered', data: command }];
  },
});

/** `pki.rotatePublisher`: the new key signs from now on; the old one is retired for good. */
export const rotatePublisher = defineCommand({
  name: 'pki.rotatePublisher',
  exposure: ['admin'],
  schema: RotatePublisher,
  aggregate: publishersAggregate,
  aggregateId: () => PUBLISHERS_ID,
  decide(command, state): PublisherEvent[] {
    const publisher = live(state, command.publisherId);
    if (publisher.publicKey === command.publicKey) return [];
    usableKey(command.publisherId, command.publicKey);
    const holder = keyInUse(state, command.publicKey);
    if (holder) throw new DomainError('ALREADY_EXISTS', `the key is (or was) publisher ${holder}'s: a retired key is never trusted again`);
    return [{ type: 'PublisherKeyRotated', data: { ...command, previousPublicKey: publisher.publicKey } }];
  },
});

/** `pki.revokePublisher`: none of the publisher's keys is trusted any more; revoking twice is a no-op. */
export const revokePublisher = defineCommand({
  name: 'pki.revokePublisher',
  exposure: ['admin'],
  schema: RevokePublisher,
  aggregate: publishersAggregate,
  aggregateId: () => PUBLISHERS_ID,
  decide(command, state): PublisherEvent[] {
    const publisher = state.publishers[command.publisherId];
    if (!publisher) throw new DomainError('NOT_FOUND', `no publisher ${command.publisherId}`);
    if (publisher.revoked) return [];
    return [{ type: 'PublisherRevoked', data: command }];
  },
});

export const publisherCommands = [registerPublisher, rotatePublisher, revokePublisher] as const;
