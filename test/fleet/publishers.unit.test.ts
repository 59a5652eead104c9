import { describe, expect, it } from 'vitest';
import { trustedPublisherKeys, type PublisherEvent } from '../../schemas/fleet/publishers.ts';
import { registerPublisher, revokePublisher, rotatePublisher } from '../../services/fleet/publishers/publisherCommands.ts';
import { publishersAggregate } from '../../services/fleet/publishers/publishers.ts';
import { deciderSpec } from '../metal/spec.ts';
import { newPublisher } from './bundleFixture.ts';

const given = deciderSpec(publishersAggregate);
const key = () => newPublisher().publicKey;
const k1 = key();
const k2 = key();
const registered: PublisherEvent = { type: 'PublisherRegistered', data: { publisherId: 'acme', publicKey: k1 } };
const fold = (events: PublisherEvent[]) => events.reduce((s, e) => publishersAggregate.evolve(s, e), publishersAggregate.initialState);

describe('publisher keys', () => {
  it('registers a publisher with a real key, once; the same registration again is a no-op', () => {
    given([]).when(registerPublisher, { publisherId: 'acme', publicKey: k1 }).then([registered]);
    given([registered]).when(registerPublisher, { publisherId: 'acme', publicKey: k1 }).then([]);
    given([registered]).when(registerPublisher, { publisherId: 'acme', publicKey: k2 }).thenRejects('ALREADY_EXISTS');
    // One key signs for one publisher.
    given([registered]).when(registerPublisher, { publisherId: 'globex', publicKey: k1 }).thenRejects('ALREADY_EXISTS');
    expect(trustedPublisherKeys(fold([registered]))).toEqual([{ publisherId: 'acme', publicKey: k1 }]);
  });

  it('refuses small-order and non-canonical keys, like approver keys', () => {
    for (const hex of ['00'.repeat(32), `01${'00'.repeat(31)}`, `ed${'ff'.repeat(30)}7f`]) {
      const publicKey = Buffer.from(hex, 'hex').toString('base64');
      given([]).when(registerPublisher, { publisherId: 'mallory', publicKey }).thenRejects('VALIDATION_FAILED');
      given([registered]).when(rotatePublisher, { publisherId: 'acme', publicKey }).thenRejects('VALIDATION_FAILED');
    }
  });

  it('rotates: only the new key is trusted, and the retired key is never accepted again', () => {
    const rotated: PublisherEvent = { type: 'PublisherKeyRotated', data: { publisherId: 'acme', publicKey: k2, previousPublicKey: k1 } };
    given([registered]).when(rotatePublisher, { publisherId: 'acme', publicKey: k2 }).then([rotated]);
    expect(trustedPublisherKeys(fold([registered, rotated]))).toEqual([{ publisherId: 'acme', publicKey: k2 }]);
    given([registered, rotated]).when(rotatePublisher, { publisherId: 'acme', publicKey: k1 }).thenRejects('ALREADY_EXISTS');
    given([registered, rotated]).when(registerPublisher, { publisherId: 'globex', publicKey: k1 }).thenRejects('ALREADY_EXISTS');
    given([]).when(rotatePublisher, { publisherId: 'acme', publicKey: k2 }).thenRejects('NOT_FOUND');
  });

  it('revokes for good: no key of the publisher is trusted, and it cannot be rotated or registered again', () => {
    const revoked: PublisherEvent = { type: 'PublisherRevoked', data: { publisherId: 'acme', reason: 'key leaked' } };
    given([registered]).when(revokePublisher, { publisherId: 'acme', reason: 'key leaked' }).then([revoked]);
    given([registered, revoked]).when(revokePublisher, { publisherId: 'acme', reason: 'again' }).then([]);
    expect(trustedPublisherKeys(fold([registered, revoked]))).toEqual([]);
    given([registered, revoked]).when(rotatePublisher, { publisherId: 'acme', publicKey: k2 }).thenRejects('ILLEGAL_TRANSITION');
    given([registered, revoked]).when(registerPublisher, { publisherId: 'acme', publicKey: k1 }).thenRejects('ILLEGAL_TRANSITION');
    given([]).when(revokePublisher, { publisherId: 'acme', reason: 'x' }).thenRejects('NOT_FOUND');
  });
});
