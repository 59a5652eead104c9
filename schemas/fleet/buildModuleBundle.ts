import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonicalJson.ts';
import { writeTar, type TarEntry } from './bundleTar.ts';
import { BUNDLE_FILES, BUNDLE_MANIFEST, BUNDLE_SIGNATURE, manifestSigningMessage, type ManifestSignature } from './moduleBundle.ts';
import { ModuleManifest, type ModuleSource } from './moduleManifest.ts';

/** A file to pack: its path in the module folder, its permission bits and its bytes. */
export interface ModuleFileInput {
  readonly path: string;
  readonly mode: number;
  readonly data: Uint8Array;
}

/** Who signs: the publisher id and raw public key `manifest.sig` names, and the signing function of its private key. */
export interface ManifestSigner {
  readonly publisherId: string;
  readonly publicKey: string;
  sign(message: Uint8Array): Uint8Array;
}

const encode = (value: unknown) => new TextEncoder().encode(canonicalJson(value));

/**
 * The canonical bundle of a module version (docs/modules.md): its manifest (the source plus every file's sha256 and
 * mode, sorted by path), the publisher's detached signature of it, and the files. The same inputs give the same bytes.
 */
export function buildModuleBundle(source: ModuleSource, files: readonly ModuleFileInput[], signer: ManifestSigner): Uint8Array {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const manifest = ModuleManifest.parse({
    ...source,
    files: sorted.map((f) => ({ path: f.path, sha256: createHash('sha256').update(f.data).digest('hex'), mode: f.mode & 0o777 })),
  });
  const manifestJson = encode(manifest);
  const signature: ManifestSignature = {
    publisherId: signer.publisherId,
    publicKey: signer.publicKey,
    signature: Buffer.from(signer.sign(manifestSigningMessage(manifestJson))).toString('base64'),
  };
  const entries: TarEntry[] = [
    { path: BUNDLE_MANIFEST, kind: 'file', mode: 0o644, data: manifestJson },
    { path: BUNDLE_SIGNATURE, kind: 'file', mode: 0o644, data: encode(signature) },
    ...sorted.map((f): TarEntry => ({ path: `${BUNDLE_FILES}${f.path}`, kind: 'file', mode: f.mode & 0o777, data: f.data })),
  ];
  return writeTar(entries);
}
