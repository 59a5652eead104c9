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

/** What an approval of a rollout names: the rollout and the digest of its plan. */
export interface RolloutApprovalRequest {
  readonly rolloutId: string;
  readonly planDigest: string;
}

/**
 * The text an approver signs for a rollout: `bc-approval/v1/rollout/<verdict>/<rolloutId>/<planDigest>`. The digest
 * alone would not do: a rollout rolled back and started again with the same hosts and options has the same plan, and
 * a signature over it would approve the retry unseen. The rollout id (`<module>-<n>`) is never reused.
 */
export const rolloutApprovalText = (verdict: 'approve' | 'reject', r: RolloutApprovalRequest): string =>
  `bc-approval/v1/rollout/${verdict}/${r.rolloutId}/${r.planDigest}`;
