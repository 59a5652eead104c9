import {
  approvalText,
  decisionApprovalText,
  rolloutApprovalText,
  type DecisionApprovalRequest,
  type RolloutApprovalRequest,
} from '../../../../../schemas/trust/approvalText.ts';

/** A WebCrypto key, named through `crypto.subtle` so the module also compiles (and is tested) outside the browser. */
type WebCryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** An approver's signing key, imported into WebCrypto as non-extractable: the page can sign with it, never read it back. */
export interface ApproverKey {
  readonly approverId: string;
  readonly key: WebCryptoKey;
}

/** The DER bytes of a PEM `PRIVATE KEY` (PKCS#8, what `openssl genpkey -algorithm ed25519` writes). */
function pkcs8Der(pem: string): Uint8Array<ArrayBuffer> {
  const match = /-----BEGIN PRIVATE KEY-----([\s\S]+?)-----END PRIVATE KEY-----/.exec(pem);
  if (!match) throw new Error('not a PEM private key (-----BEGIN PRIVATE KEY-----, PKCS#8)');
  const binary = atob(match[1]!.replace(/\s+/g, ''));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

export async function importApproverKey(approverId: string, pem: string): Promise<ApproverKey> {
  try {
    const key = await crypto.subtle.importKey('pkcs8', pkcs8Der(pem), { name: 'Ed25519' }, false, ['sign']);
    return { approverId, key };
  } catch (err) {
    throw new Error(`the key could not be imported as Ed25519: ${(err as Error).message}`, { cause: err });
  }
}

async function signText(key: ApproverKey, text: string): Promise<string> {
  const signature = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, key.key, new TextEncoder().encode(text)));
  return btoa(String.fromCharCode(...signature));
}

/** The base64 Ed25519 signature over `bc-approval/v1/<verdict>/<digest>` (a workflow's batch), made in the browser. */
export const signVerdict = (key: ApproverKey, verdict: 'approve' | 'reject', digest: string): Promise<string> => signText(key, approvalText(verdict, digest));

/** The base64 Ed25519 signature approving one episode of an autonomy decision (`decisionApprovalText`), made in the browser. */
export const signDecisionApproval = (key: ApproverKey, request: DecisionApprovalRequest): Promise<string> =>
  signText(key, decisionApprovalText('approve', request));

/** The base64 Ed25519 signature approving or rejecting one rollout's plan (`rolloutApprovalText`), made in the browser. */
export const signRolloutVerdict = (key: ApproverKey, verdict: 'approve' | 'reject', request: RolloutApprovalRequest): Promise<string> =>
  signText(key, rolloutApprovalText(verdict, request));
