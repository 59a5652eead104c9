import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { moduleHost, type ModuleApplyParams } from '../../daemon/node/modules/moduleHost.ts';
import type { ModuleFileInput } from '../../schemas/fleet/buildModuleBundle.ts';
import { verifyModuleBundle } from '../../schemas/fleet/moduleBundle.ts';
import type { ModuleSource } from '../../schemas/fleet/moduleManifest.ts';
import { bundleOf, newPublisher } from '../fleet/bundleFixture.ts';

export const publisher = newPublisher('acme');
export const trusted = [{ publisherId: publisher.publisherId, publicKey: publisher.publicKey }];
const text = (s: string) => new TextEncoder().encode(s);

/** A module whose `bin/<name>` prints its version, and whose probe calls it by name through PATH. */
export function moduleBundle(version: string, overrides: Partial<ModuleSource> = {}, extra: ModuleFileInput[] = []) {
  const name = overrides.name ?? 'resolver';
  const files: ModuleFileInput[] = [
    { path: `bin/${name}`, mode: 0o755, data: text(`#!/bin/sh\necho "${name} ${version}"\n`) },
    { path: 'etc/resolver.conf', mode: 0o644, data: text(`version ${version}\n`) },
    ...extra,
  ];
  const bundle = bundleOf(
    publisher,
    { name, version, requires: [], provides: [], exclusive: [], probes: [{ name: 'runs', command: `${name}`, shell: 'login' }], ...overrides },
    files,
  );
  const verdict = verifyModuleBundle(bundle, trusted);
  if (!verdict.ok) throw new Error(verdict.message);
  const params: ModuleApplyParams = {
    module: name,
    version,
    bundleUrl: 'http://bundles.invalid/b',
    bundleSha256: '0'.repeat(64),
    manifestSha256: verdict.manifestSha256,
    trustedPublishers: trusted,
    probeTimeoutMs: 5_000,
  };
  return { bundle, params };
}

/** A state folder under /var/tmp and a host on it whose boot id the test sets. */
export function hostFixture() {
  const stateDir = mkdtempSync('/var/tmp/bc-modules-');
  const boot = { id: 'boot-1' };
  const host = moduleHost({ stateDir, bootId: () => boot.id });
  return {
    stateDir,
    boot,
    host,
    modules: join(stateDir, 'modules'),
    [Symbol.dispose]: () => rmSync(stateDir, { recursive: true, force: true }),
  };
}

/** Every entry under `root` with its kind, inode, mode, mtime and content (or link target): equal means nothing changed. */
export function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const st = lstatSync(path, { bigint: true });
      const what = st.isSymbolicLink() ? `link:${readlinkSync(path)}` : st.isDirectory() ? 'dir' : `file:${readFileSync(path, 'base64')}`;
      out[path.slice(root.length)] = `${what}:${st.ino}:${st.mode}:${st.mtimeNs}`;
      if (st.isDirectory()) walk(path);
    }
  };
  walk(root);
  return out;
}
