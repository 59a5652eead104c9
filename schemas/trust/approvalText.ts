/**
 * The text an approver signs: the verdict and the batch digest, so an approval cannot be replayed as a rejection or
 * elsewhere. Dependency-free: the web console signs it in the browser with WebCrypto.
 */
export const approvalText = (verdict: 'approve' | 'reject', digest: string): string => `bc-approval/v1/${verdict}/${digest}`;
