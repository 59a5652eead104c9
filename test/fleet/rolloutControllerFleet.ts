import type { ModuleApplyParams } from '../../daemon/node/modules/moduleHost.ts';
import { verifyModuleBundle } from '../../schemas/fleet/moduleBundle.ts';
import { bundleOf, newPublisher } from './bundleFixture.ts';

/** The fleet and module versions of the rollout controller's integration test (`rolloutController.int.test.ts`). */
export const hosts = ['n1', 'n2', 'n3'] as const;
export const siteOf = (host: string) => `dc-${host}`;
export const publisher = newPublisher('acme');
const trusted = [{ publisherId: publisher.publisherId, publicKey: publisher.publicKey }];
export const text = (s: string) => new TextEncoder().encode(s);

/** `resolver` at `version`: `bin/resolver` prints its version; its probe runs `probe` (default: calls it through PATH). */
function resolver(version: string, probe = 'resolver') {
  const source = { name: 'resolver', version, provides: [], requires: [], exclusive: [], probes: [{ name: 'runs', command: probe, shell: 'login' as const }] };
  const bundle = bundleOf(publisher, source, [{ path: 'bin/resolver', mode: 0o755, data: text(`#!/bin/sh\necho "resolver ${version}"\n`) }]);
  const verdict = verifyModuleBundle(bundle, trusted);
  if (!verdict.ok) throw new Error(verdict.message);
  const params: ModuleApplyParams = {
    module: 'resolver',
    version,
    bundleUrl: 'http://bundles.invalid/b',
    bundleSha256: '0'.repeat(64),
    manifestSha256: verdict.manifestSha256,
    trustedPublishers: trusted,
    probeTimeoutMs: 5_000,
  };
  return { bundle, params };
}

export const versions = {
  v1: resolver('1.0.0'),
  // A probe that takes a moment, so a controller can be stopped while a wave's hosts are still applying.
  v2: resolver('1.1.0', 'sleep 1; resolver'),
  v3: resolver('1.2.0', 'exit 3'),
  // Its stored bundle is swapped for other bytes once published: every host refuses it (the digest does not match).
  v4: resolver('1.3.0'),
};
