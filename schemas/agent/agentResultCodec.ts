import { createHash, createPublicKey, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { AgentCommandKinds, ramdiskOnlyKinds, type AgentCommand } from './agentCommand.ts';
import { provenBefore, rememberProven } from './provenSignatures.ts';

/** One agent's answer to one AgentCommand, as code sees it (the wire form is `AgentResult` in agentResult.proto). */
export interface AgentResultData {
  commandId: string;
  kind: string;
  nodeId: string;
  siteId: string;
  agentId: string;
  ok: boolean;
  /** Stable code when `ok` is false (e.g. DRIVER_ERROR, INTERRUPTED, EXPIRED); '' otherwise. */
  errorCode: string;
  errorMessage: string;
  /** Kind-specific output; carried as UTF-8 JSON, `null` when there is none. */
  payload: unknown;
  executedAtMs: number;
  /** The answered command's nonce ('' in results of commands that had none). */
  commandNonce: string;
}

/** The key the control plane registered for an agent (from `agent.register`). */
export interface RegisteredAgentKey {
  keyId: string;
  /** base64 of the raw 32-byte Ed25519 public key. */
  publicKey: string;
  role: 'site' | 'ramdisk' | 'node';
  siteId: string;
  nodeId: string | null;
}

export type AgentResultRejection = 'MALFORMED' | 'UNSIGNED' | 'UNKNOWN_AGENT' | 'FORGED' | 'MISMATCHED' | 'NOT_AUTHORISED';
export type VerifiedAgentResult = { ok: true; result: AgentResultData } | { ok: false; reason: AgentResultRejection };

// Parsed once at import; the .proto next to this module is the single definition of the wire format.
const root = protobuf.loadSync(fileURLToPath(new URL('./agentResult.proto', import.meta.url)));
const AgentResultType = root.lookupType('bc.agent.v1.AgentResult');
const SignedAgentResultType = root.lookupType('bc.agent.v1.SignedAgentResult');
const toObjectOptions = { longs: Number, bytes: Uint8Array, defaults: true } as const;
const NONCE_BYTES = 16;

/** base64url(SHA-256(raw 32-byte Ed25519 public key)): the id an agent's key is registered and referenced by. */
export function keyIdOf(publicKeyRaw: Uint8Array): string {
  return createHash('sha256').update(publicKeyRaw).digest('base64url');
}

function encodeResult(result: AgentResultData): Uint8Array {
  return AgentResultType.encode(
    AgentResultType.fromObject({
      commandId: result.commandId,
      kind: result.kind,
      nodeId: result.nodeId,
      siteId: result.siteId,
      agentId: result.agentId,
      ok: result.ok,
      errorCode: result.errorCode,
      errorMessage: result.errorMessage,
      payloadJson: Buffer.from(JSON.stringify(result.payload ?? null), 'utf8'),
      executedAtMs: result.executedAtMs,
      commandNonce: result.commandNonce,
      // A fresh nonce per signature, so a result re-signed with the same fields still signs different bytes.
      nonce: randomBytes(NONCE_BYTES),
    }),
  ).finish();
}

/** Serialises and signs a result; the bytes are a `SignedAgentResult`, ready to publish on the result subject. */
export function signAgentResult(result: AgentResultData, signer: { privateKey: KeyObject; publicKeyRaw: Uint8Array }): Uint8Array {
  const resultBytes = encodeResult(result);
  const signature = sign(null, resultBytes, signer.privateKey);
  return SignedAgentResultType.encode(SignedAgentResultType.fromObject({ result: resultBytes, signature, keyId: keyIdOf(signer.publicKeyRaw) })).finish();
}

/** Parses a `SignedAgentResult` without checking the signature; throws on bytes that are not one. */
export function decodeSignedResult(bytes: Uint8Array): { result: AgentResultData; resultBytes: Uint8Array; signature: Uint8Array; keyId: string } {
  const envelope = SignedAgentResultType.toObject(SignedAgentResultType.decode(bytes), toObjectOptions) as {
    result: Uint8Array;
    signature: Uint8Array;
    keyId: string;
  };
  const r = AgentResultType.toObject(AgentResultType.decode(envelope.result), toObjectOptions) as {
    commandId: string;
    kind: string;
    nodeId: string;
    siteId: string;
    agentId: string;
    ok: boolean;
    errorCode: string;
    errorMessage: string;
    payloadJson: Uint8Array;
    executedAtMs: number;
    commandNonce: string;
  };
  const payloadText = Buffer.from(r.payloadJson).toString('utf8');
  const result: AgentResultData = {
    commandId: r.commandId,
    kind: r.kind,
    nodeId: r.nodeId,
    siteId: r.siteId,
    agentId: r.agentId,
    ok: r.ok,
    errorCode: r.errorCode,
    errorMessage: r.errorMessage,
    payload: payloadText === '' ? null : (JSON.parse(payloadText) as unknown),
    executedAtMs: r.executedAtMs,
    commandNonce: r.commandNonce,
  };
  return { result, resultBytes: envelope.result, signature: envelope.signature, keyId: envelope.keyId };
}

/** Imported public keys by their base64: a key is checked once per result and heartbeat, imported once. */
const publicKeys = new Map<string, KeyObject>();
const PUBLIC_KEYS_KEPT = 10_000;

function ed25519PublicKey(publicKeyBase64: string): KeyObject {
  let key = publicKeys.get(publicKeyBase64);
  if (!key) {
    const raw = Buffer.from(publicKeyBase64, 'base64');
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
    if (publicKeys.size >= PUBLIC_KEYS_KEPT) publicKeys.delete(publicKeys.keys().next().value!);
    publicKeys.set(publicKeyBase64, key);
  }
  return key;
}

/** True when `signature` is an Ed25519 signature of `message` by the raw 32-byte key `publicKeyBase64`. */
export function signatureHolds(message: Uint8Array, signature: Uint8Array, publicKeyBase64: string): boolean {
  if (provenBefore(message, signature, publicKeyBase64)) return true;
  try {
    const holds = verify(null, message, ed25519PublicKey(publicKeyBase64), signature);
    if (holds) rememberProven(message, signature, publicKeyBase64);
    return holds;
  } catch {
    return false;
  }
}

function authorised(key: RegisteredAgentKey, agentId: string, command: AgentCommand): boolean {
  if (key.siteId !== command.siteId) return false;
  // A command addressed to one agent (the ramdisk a workflow booted) counts only from that agent.
  if (command.agentId !== undefined && agentId !== command.agentId) return false;
  const runsOn = AgentCommandKinds[command.kind].runsOn;
  if (runsOn === 'site') return key.role === 'site';
  // Wipes and images are attested by a ramdisk only: a tenant's installed host never speaks for its own disk.
  if (ramdiskOnlyKinds.has(command.kind) && key.role !== 'ramdisk') return false;
  // Node kinds: only an agent running inside that very machine may answer.
  return key.role !== 'site' && key.nodeId === command.nodeId;
}

/**
 * Decides whether a published result counts as the answer to `command`. Checks, in order: it parses (MALFORMED),
 * carries a signature (UNSIGNED), names a registered agent (UNKNOWN_AGENT), is signed by that agent's registered key
 * (FORGED), answers this very command and covers its nonce (MISMATCHED: a replay of another command's result, or one
 * made before the command existed), and comes from an agent allowed to run this kind for this node and site, and the
 * agent the command was addressed to (NOT_AUTHORISED).
 */
export function verifyAgentResult(
  bytes: Uint8Array,
  command: AgentCommand,
  publicKeyFor: (agentId: string) => RegisteredAgentKey | undefined,
): VerifiedAgentResult {
  let decoded: ReturnType<typeof decodeSignedResult>;
  try {
    decoded = decodeSignedResult(bytes);
  } catch {
    return { ok: false, reason: 'MALFORMED' };
  }
  const { result, resultBytes, signature, keyId } = decoded;
  if (resultBytes.length === 0 || result.commandId === '') return { ok: false, reason: 'MALFORMED' };
  if (signature.length === 0 || keyId === '') return { ok: false, reason: 'UNSIGNED' };
  const key = publicKeyFor(result.agentId);
  if (!key) return { ok: false, reason: 'UNKNOWN_AGENT' };
  const registeredKeyId = keyIdOf(Buffer.from(key.publicKey, 'base64'));
  if (keyId !== key.keyId || keyId !== registeredKeyId || !signatureHolds(resultBytes, signature, key.publicKey)) {
    return { ok: false, reason: 'FORGED' };
  }
  if (
    result.commandId !== command.commandId ||
    result.kind !== command.kind ||
    result.nodeId !== command.nodeId ||
    result.siteId !== command.siteId ||
    result.commandNonce !== command.nonce
  ) {
    return { ok: false, reason: 'MISMATCHED' };
  }
  if (!authorised(key, result.agentId, command)) return { ok: false, reason: 'NOT_AUTHORISED' };
  return { ok: true, result };
}
