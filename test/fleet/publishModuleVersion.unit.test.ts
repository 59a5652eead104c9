import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ModuleEvent } from '../../schemas/fleet/modules.ts';
import type { PublisherEvent, PublishersState } from '../../schemas/fleet/publishers.ts';
import { moduleAggregate } from '../../services/fleet/module/module.ts';
import { publishModuleVersion } from '../../services/fleet/module/publishVersion.ts';
import { publishersAggregate } from '../../services/fleet/publishers/publishers.ts';
import { bundleOf, newPublisher } from './bundleFixture.ts';

const given = (events: ModuleEvent[]) => events.reduce((s, e) => moduleAggregate.evolve(s, e), moduleAggregate.initialState);
const publishersAfter = (events: PublisherEvent[]): PublishersState =>
  events.reduce((s, e) => publishersAggregate.evolve(s, e), publishersAggregate.initialState);
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

const acme = newPublisher('acme');
const registered: PublisherEvent = { type: 'PublisherRegistered', data: { publisherId: 'acme', publicKey: acme.publicKey } };
const trusting = publishersAfter([registered]);

function decide(bundle: Uint8Array, options: { module?: string; version?: string; state?: ModuleEvent[]; publishers?: PublishersState } = {}) {
  const payload = publishModuleVersion.schema.parse({
    module: options.module ?? 'dns-resolver',
    version: options.version ?? '1.2.0',
    bundleSha256: sha(bundle),
    bundle,
  });
  return publishModuleVersion.decide(payload, given(options.state ?? []), {
    commandId: 'cmd-00000001',
    actor: 'test',
    now: '2026-12-06T12:00:00.000Z',
    dependencies: { publishers: options.publishers ?? trusting },
  });
}
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return 'accepted';
};

describe('fleet.publishModuleVersion', () => {
  const bundle = bundleOf(acme);

  it('publishes a bundle signed by a trusted publisher, with its manifest and manifest digest', () => {
    const events = decide(bundle);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'ModuleVersionPublished',
      data: {
        module: 'dns-resolver',
        version: '1.2.0',
        bundleSha256: sha(bundle),
        publisherId: 'acme',
        publicKey: acme.publicKey,
        manifest: { name: 'dns-resolver', version: '1.2.0' },
      },
    });
    expect(events[0]!.data.manifestSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(given([...events]).versions.map((v) => v.version)).toEqual(['1.2.0']);
  });

  it('refuses a version already published, even from another bundle', () => {
    const published = [...decide(bundle)];
    const again = bundleOf(acme, { probes: [] });
    expect(refusal(() => decide(again, { state: published }))).toBe('MODULE_VERSION_EXISTS');
    expect(refusal(() => decide(bundleOf(acme, { version: '1.3.0' }), { version: '1.3.0', state: published }))).toBe('accepted');
  });

  it('refuses a bundle whose signed manifest names another module or version than the command', () => {
    expect(refusal(() => decide(bundle, { module: 'ntp' }))).toBe('MODULE_NAME_MISMATCH');
    expect(refusal(() => decide(bundle, { version: '1.2.1' }))).toBe('MODULE_NAME_MISMATCH');
  });

  it('refuses a bundle of a publisher rotated out or revoked since it signed, and of an unknown one', () => {
    const rotated = publishersAfter([
      registered,
      { type: 'PublisherKeyRotated', data: { publisherId: 'acme', publicKey: newPublisher().publicKey, previousPublicKey: acme.publicKey } },
    ]);
    expect(refusal(() => decide(bundle, { publishers: rotated }))).toBe('BUNDLE_PUBLISHER_UNTRUSTED');
    const revoked = publishersAfter([registered, { type: 'PublisherRevoked', data: { publisherId: 'acme', reason: 'leaked' } }]);
    expect(refusal(() => decide(bundle, { publishers: revoked }))).toBe('BUNDLE_PUBLISHER_UNTRUSTED');
    expect(refusal(() => decide(bundle, { publishers: publishersAfter([]) }))).toBe('BUNDLE_PUBLISHER_UNTRUSTED');
  });

  it('refuses an empty, tampered or unsigned bundle with the verifier’s code', () => {
    expect(refusal(() => decide(new Uint8Array()))).toBe('BUNDLE_EMPTY');
    const tampered = bundle.slice();
    const firstByteOfLastFile = tampered.byteLength - 1024 - 512;
    tampered[firstByteOfLastFile] = tampered[firstByteOfLastFile]! ^ 1;
    expect(refusal(() => decide(tampered))).toBe('BUNDLE_FILE_MISMATCH');
    const forged = bundleOf({ ...newPublisher('acme'), publicKey: acme.publicKey });
    expect(refusal(() => decide(forged))).toBe('BUNDLE_SIGNATURE_INVALID');
  });

  it('refuses bytes that are not the blob the command names', () => {
    const payload = { module: 'dns-resolver', version: '1.2.0', bundleSha256: sha(new Uint8Array([1])), bundle };
    expect(
      refusal(() =>
        publishModuleVersion.decide(publishModuleVersion.schema.parse(payload), given([]), {
          commandId: 'cmd-00000001',
          actor: 'test',
          now: '2026-12-06T12:00:00.000Z',
          dependencies: { publishers: trusting },
        }),
      ),
    ).toBe('BUNDLE_NOT_STORED');
  });
});
