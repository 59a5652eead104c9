/**
 * Ed25519 signatures this process has already seen hold, each with its message and key. A verification is a pure
 * function of (message, signature, key), so a repeat of the same three is answered from here: a result is verified by
 * the result intake, again when the step reads it back from the accepted subject, and again as the evidence of
 * `workflow.completeStep`, each in the executor's process (three Ed25519 verifications per result were 9 % of the
 * control plane's CPU in the fleet bench). Only successes are kept, with their exact bytes: anything that differs in
 * one byte is verified afresh. Whether the key is still the agent's is not this cache's business; the callers read it.
 */
const proven = new Map<string, { publicKey: string; message: Buffer }>();
const PROVEN_KEPT = 4_096;
const idOf = (signature: Uint8Array) => Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength).toString('base64');

/** True when `signature` over `message` by `publicKeyBase64` was proven before in this process. */
export function provenBefore(message: Uint8Array, signature: Uint8Array, publicKeyBase64: string): boolean {
  const entry = proven.get(idOf(signature));
  return entry !== undefined && entry.publicKey === publicKeyBase64 && entry.message.equals(message);
}

/** Records a signature that held. */
export function rememberProven(message: Uint8Array, signature: Uint8Array, publicKeyBase64: string): void {
  if (proven.size >= PROVEN_KEPT) proven.delete(proven.keys().next().value!);
  proven.set(idOf(signature), { publicKey: publicKeyBase64, message: Buffer.from(message) });
}
