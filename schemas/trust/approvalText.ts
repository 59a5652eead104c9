/**
 * The text an approver signs: the verdict and the batch digest, so an approval cannot be replayed as a rejection or
 * elsewhere. Dependency-free: the web console signs it in the browser with WebCrypto.
 */
export const approvalText = (verdict: 'approve' | 'reject', digest: string): string => `bc-approval/v1/${verdict}/${digest}`;

/** What an approval of an autonomy decision names: one episode of one decision, its deadline and its plan. */
export interface DecisionApprovalRequest {
  readonly decisionId: string;
  readonly episode: number;
  /** ISO-8601, as the decision states it (a pending request always has one; `none` is signed otherwise). */
  readonly expiresAt: string | null;
  readonly planDigest: string;
}

/**
 * The text an approver signs for an autonomy decision: `bc-approval/v1/decision/<verdict>/<decisionId>/<episode>/
 * <expiresAt>/<planDigest>`. The plan digest alone names only what runs, not which request: the same plan comes back
 * in the next episode of the key, so a signature over it would approve that one too. Its own `decision` segment keeps
 * it apart from a workflow batch's text.
 */
export const decisionApprovalText = (verdict: 'approve' | 'reject', r: DecisionApprovalRequest): string =>
  `bc-approval/v1/decision/${verdict}/${r.decisionId}/${r.episode}/${r.expiresAt ?? 'none'}/${r.planDigest}`;
