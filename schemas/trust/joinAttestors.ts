import type { JoinAttestorName, JoinExpectation, JoinRefusal } from './joinTokens.ts';

/**
 * The attestors a join token can name (`JoinAttestorName`, on the token): what each asks of the joining machine
 * besides the token, when the token is made and when it is used.
 */

/** What the joining machine says of itself, and what the control plane already knows of it. */
export interface JoinEvidence {
  /** The SMBIOS UUID the joiner reports (lower case). */
  readonly presentedProductUuid: string | undefined;
  /** The UUID the node's Redfish inventory recorded, if any. */
  readonly inventoriedProductUuid: string | undefined;
}

export interface JoinAttestor {
  readonly name: JoinAttestorName;
  /** Why a token with this expectation may not be made; undefined when it may. */
  refusesToMint(expect: JoinExpectation | null): string | undefined;
  /** Why this joiner is not the machine the token was made for; undefined when it is. */
  refusalOf(expect: JoinExpectation | null, evidence: JoinEvidence): JoinRefusal | undefined;
}

function productUuidRefusal(expect: JoinExpectation | null, evidence: JoinEvidence): JoinRefusal | undefined {
  const expected = expect?.productUuid;
  if (expected === undefined) return undefined;
  if (evidence.presentedProductUuid !== expected) return 'JOIN_EXPECTATION_FAILED';
  // What Redfish reported for the node is the reference: a token made before an inventory changed must not win.
  if (evidence.inventoriedProductUuid && evidence.inventoriedProductUuid !== evidence.presentedProductUuid) return 'JOIN_EXPECTATION_FAILED';
  return undefined;
}

export const joinAttestors: Readonly<Record<JoinAttestorName, JoinAttestor>> = {
  issued: { name: 'issued', refusesToMint: () => undefined, refusalOf: productUuidRefusal },
  provisioned: {
    name: 'provisioned',
    refusesToMint: (expect) => (expect?.productUuid === undefined ? 'a provisioned join token must expect the machine’s product UUID' : undefined),
    refusalOf: (expect, evidence) => (expect?.productUuid === undefined ? 'JOIN_EXPECTATION_FAILED' : productUuidRefusal(expect, evidence)),
  },
};
