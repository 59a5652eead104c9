import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { buildModuleBundle, type ManifestSigner, type ModuleFileInput } from '../../schemas/fleet/buildModuleBundle.ts';
import type { ModuleSource } from '../../schemas/fleet/moduleManifest.ts';

/** A publisher with a fresh Ed25519 key: what `pki.registerPublisher` is sent and what signs bundles. */
export function newPublisher(publisherId = 'acme'): ManifestSigner & { privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publisherId,
    publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64'),
    privateKey,
    sign: (message) => sign(null, message, privateKey),
  };
}

export const source = (overrides: Partial<ModuleSource> = {}): ModuleSource => ({
  name: 'dns-resolver',
  version: '1.2.0',
  provides: ['dns'],
  requires: [{ capability: 'libc', range: '^2.31' }],
  exclusive: ['dns'],
  rebootRequired: false,
  probes: [{ name: 'answers', command: 'bin/resolver --check', shell: 'login' }],
  ...overrides,
});

export const files = (): ModuleFileInput[] => [
  { path: 'bin/resolver', mode: 0o755, data: new TextEncoder().encode('#!/bin/sh\necho resolver\n') },
  { path: 'etc/resolver.conf', mode: 0o644, data: new TextEncoder().encode('listen 127.0.0.53\n') },
];

export const bundleOf = (signer: ManifestSigner, overrides: Partial<ModuleSource> = {}, fileInputs = files()) =>
  buildModuleBundle(source(overrides), fileInputs, signer);
