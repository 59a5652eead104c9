import { createHash, createPublicKey, verify } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../canonicalJson.ts';
import { Ed25519Signature } from '../ed25519.ts';
import type { ErrorCode } from '../errorCodes.ts';
import { readTar, TarRefusal } from './bundleTar.ts';
import { ModuleManifest } from './moduleManifest.ts';
import { PublisherId, PublisherPublicKey, type TrustedPublisherKey } from './publishers.ts';

/** The bundle's entries (docs/modules.md): the manifest, its detached signature, and each listed file under `files/`. */
export const BUNDLE_MANIFEST = 'manifest.json';
export const BUNDLE_SIGNATURE = 'manifest.sig';
export const BUNDLE_FILES = 'files/';

/** `manifest.sig`: who signed the manifest, with which key, and the Ed25519 signature of `manifestSigningMessage`. */
export const ManifestSignature = z.object({ publisherId: PublisherId, publicKey: PublisherPublicKey, signature: Ed25519Signature }).strict();
export type ManifestSignature = z.infer<typeof ManifestSignature>;

const SIGNING_CONTEXT = 'better-compute module manifest v1\n';

/**
 * What a publisher signs: a context line, then the manifest's canonical JSON bytes (exactly `manifest.json`). The
 * context keeps a publisher key's signature from meaning anything outside module manifests.
 */
export const manifestSigningMessage = (manifestJson: Uint8Array): Uint8Array => Buffer.concat([Buffer.from(SIGNING_CONTEXT, 'utf8'), manifestJson]);

/** The codes a bundle is refused with (`schemas/errorCodes.ts`). */
export type BundleRefusalCode = Extract<
  ErrorCode,
  | 'BUNDLE_EMPTY'
  | 'BUNDLE_MALFORMED'
  | 'BUNDLE_UNSIGNED'
  | 'BUNDLE_SIGNATURE_INVALID'
  | 'BUNDLE_PUBLISHER_UNTRUSTED'
  | 'BUNDLE_FILE_MISMATCH'
  | 'BUNDLE_FILE_UNLISTED'
  | 'BUNDLE_FILE_MISSING'
  | 'BUNDLE_PATH_UNSAFE'
>;

export type BundleVerdict =
  | {
      readonly ok: true;
      readonly manifest: ModuleManifest;
      /** sha256 (hex) of `manifest.json`: what `ModuleVersionPublished` records and heartbeats report against. */
      readonly manifestSha256: string;
      readonly publisherId: string;
      /** The publisher key the manifest signature verified against. */
      readonly publicKey: string;
      /** The verified file contents by manifest path, for whoever unpacks them. */
      readonly files: ReadonlyMap<string, Uint8Array>;
    }
  | { readonly ok: false; readonly code: BundleRefusalCode; readonly message: string };

const refuse = (code: BundleRefusalCode, message: string): BundleVerdict => ({ ok: false, code, message });
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses `bytes` as canonical JSON: undefined unless the bytes are exactly `canonicalJson` of what they hold. */
function canonicalValue(bytes: Uint8Array): unknown {
  try {
    const value: unknown = JSON.parse(utf8.decode(bytes));
    return canonicalJson(value) === Buffer.from(bytes).toString('utf8') ? value : undefined;
  } catch {
    return undefined;
  }
}

function signatureHolds(message: Uint8Array, signature: string, publicKey: string): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey, 'base64').toString('base64url') }, format: 'jwk' });
    return verify(null, message, key, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

/**
 * Verifies a module bundle against the publisher keys trusted now: pure, no I/O. Accepted only when the tarball is
 * canonical, its manifest is signed by a trusted key, and its files are exactly the manifest's, byte for byte and
 * mode for mode. Every refusal names its code; the first one found is returned.
 */
export function verifyModuleBundle(bytes: Uint8Array, trustedPublisherKeys: readonly TrustedPublisherKey[]): BundleVerdict {
  if (bytes.byteLength === 0) return refuse('BUNDLE_EMPTY', 'the bundle has no bytes');
  let entries;
  try {
    entries = readTar(bytes);
  } catch (err) {
    if (err instanceof TarRefusal) return refuse(err.reason === 'unsafe' ? 'BUNDLE_PATH_UNSAFE' : 'BUNDLE_MALFORMED', err.message);
    throw err;
  }
  if (entries.length === 0) return refuse('BUNDLE_EMPTY', 'the bundle has no entries');
  const byPath = new Map<string, (typeof entries)[number]>();
  for (const e of entries) {
    // A second entry of the same path would overwrite the first when unpacked: what was verified is not what lands.
    if (byPath.has(e.path)) return refuse('BUNDLE_MALFORMED', `${e.path} appears twice`);
    byPath.set(e.path, e);
  }

  const manifestEntry = byPath.get(BUNDLE_MANIFEST);
  if (manifestEntry?.kind !== 'file') return refuse('BUNDLE_MALFORMED', `the bundle has no ${BUNDLE_MANIFEST}`);
  const parsed = ModuleManifest.safeParse(canonicalValue(manifestEntry.data));
  if (!parsed.success) return refuse('BUNDLE_MALFORMED', `${BUNDLE_MANIFEST} is not a canonical module manifest: ${parsed.error.issues[0]?.message ?? ''}`);
  const manifest = parsed.data;
  if (manifest.files.length === 0) return refuse('BUNDLE_EMPTY', 'the manifest lists no file');

  const signatureEntry = byPath.get(BUNDLE_SIGNATURE);
  if (signatureEntry === undefined) return refuse('BUNDLE_UNSIGNED', `the bundle has no ${BUNDLE_SIGNATURE}`);
  const signature = ManifestSignature.safeParse(signatureEntry.kind === 'file' ? canonicalValue(signatureEntry.data) : undefined);
  if (!signature.success) return refuse('BUNDLE_MALFORMED', `${BUNDLE_SIGNATURE} is not a canonical manifest signature`);
  const { publisherId, publicKey } = signature.data;
  if (!trustedPublisherKeys.some((k) => k.publisherId === publisherId && k.publicKey === publicKey)) {
    return refuse('BUNDLE_PUBLISHER_UNTRUSTED', `publisher ${publisherId}'s key ${publicKey} is not trusted (unknown, rotated out or revoked)`);
  }
  if (!signatureHolds(manifestSigningMessage(manifestEntry.data), signature.data.signature, publicKey)) {
    return refuse('BUNDLE_SIGNATURE_INVALID', `the manifest signature does not verify against publisher ${publisherId}'s key`);
  }

  const listed = new Map(manifest.files.map((f) => [f.path, f]));
  const files = new Map<string, Uint8Array>();
  for (const e of entries) {
    if (e.path === BUNDLE_MANIFEST || e.path === BUNDLE_SIGNATURE) continue;
    if (e.kind === 'folder') {
      const inside = `${e.path}/`;
      if (`${e.path}/` === BUNDLE_FILES || manifest.files.some((f) => `${BUNDLE_FILES}${f.path}`.startsWith(inside))) continue;
      return refuse('BUNDLE_FILE_UNLISTED', `folder ${e.path} holds no listed file`);
    }
    const path = e.path.startsWith(BUNDLE_FILES) ? e.path.slice(BUNDLE_FILES.length) : undefined;
    const file = path === undefined ? undefined : listed.get(path);
    if (path === undefined || file === undefined) return refuse('BUNDLE_FILE_UNLISTED', `${e.path} is not in the manifest`);
    if (sha256(e.data) !== file.sha256) return refuse('BUNDLE_FILE_MISMATCH', `${path}: sha256 differs from the manifest`);
    if (e.mode !== file.mode) return refuse('BUNDLE_FILE_MISMATCH', `${path}: mode ${e.mode.toString(8)} differs from the manifest's ${file.mode.toString(8)}`);
    files.set(path, e.data);
  }
  const missing = manifest.files.find((f) => !files.has(f.path));
  if (missing) return refuse('BUNDLE_FILE_MISSING', `${missing.path} is in the manifest but not in the bundle`);
  return { ok: true, manifest, manifestSha256: sha256(manifestEntry.data), publisherId, publicKey, files };
}
