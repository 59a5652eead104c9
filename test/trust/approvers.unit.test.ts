import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SetApprovers } from '../../schemas/trust/approvals.ts';
import { approversAggregate } from '../../services/trust/approvers/approvers.ts';
import { setApprovers, unusableApproverKey } from '../../services/trust/approvers/setApprovers.ts';
import { deciderSpec } from '../metal/spec.ts';

const given = deciderSpec(approversAggregate);
const realKey = () => Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
const hex = (h: string) => Buffer.from(h, 'hex').toString('base64');
const ff = 'ff'.repeat(30);

/** Every encoding of the eight small-order points (with and without the sign bit), and the non-canonical y = p, p + 1. */
const smallOrder = {
  'all zero (order 4)': hex('00'.repeat(32)),
  identity: hex(`01${'00'.repeat(31)}`),
  'order 4, sign bit': hex(`${'00'.repeat(31)}80`),
  'order 8': hex('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05'),
  'order 8, sign bit': hex('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85'),
  'order 8 (other)': hex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a'),
  'order 8 (other), sign bit': hex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa'),
  'order 2 (y = p - 1)': hex(`ec${ff}7f`),
  'non-canonical y = p': hex(`ed${ff}7f`),
  'non-canonical y = p + 1': hex(`ee${ff}7f`),
};

describe('pki.setApprovers', () => {
  it.each(Object.entries(smallOrder))('accepted an all-zero (small-order) approver key (regression): refuses %s', (_name, publicKey) => {
    expect(unusableApproverKey(publicKey)).toBeDefined();
    given([])
      .when(setApprovers, { approvers: [{ approverId: 'mallory', publicKey }], threshold: 1 })
      .thenRejects('VALIDATION_FAILED');
  });

  it('accepts real keys and a threshold from 1 to the number of approvers', () => {
    const approvers = [
      { approverId: 'alice', publicKey: realKey() },
      { approverId: 'bob', publicKey: realKey() },
    ];
    expect(unusableApproverKey(approvers[0]!.publicKey)).toBeUndefined();
    for (const threshold of [1, 2]) {
      given([])
        .when(setApprovers, { approvers, threshold })
        .then((e) => expect(e).toMatchObject([{ type: 'ApproversSet', data: { threshold } }]));
    }
  });

  it('accepted a threshold of -0 (regression): the threshold is a positive integer ≤ the number of approvers, 0 only with none', () => {
    const approvers = [{ approverId: 'alice', publicKey: realKey() }];
    for (const threshold of [-0, 0, 2, -1, 1.5]) expect(SetApprovers.safeParse({ approvers, threshold }).success, `threshold ${threshold}`).toBe(false);
    expect(SetApprovers.safeParse(JSON.parse(`{"approvers":[],"threshold":-0}`)).success).toBe(false);
    // No approvers and no threshold: the quorum is off.
    expect(SetApprovers.safeParse({ approvers: [], threshold: 0 }).success).toBe(true);
  });
});
