import { createHash } from 'node:crypto';
import { verifyModuleBundle } from '../../../schemas/fleet/moduleBundle.ts';
import { PublishModuleVersionCommand, type ModuleEvent } from '../../../schemas/fleet/modules.ts';
import { PUBLISHERS_ID, publishersRef, trustedPublisherKeys } from '../../../schemas/fleet/publishers.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { moduleAggregate } from './module.ts';

/**
 * `fleet.publishModuleVersion` (edge: the publishing route reads the bundle from the blob store and sends it here with
 * the request): verifies the bundle against the publisher keys trusted now, read from the log, never a cached copy
 * (a key revoked a moment ago must not publish), checks that its signed manifest names this module and version, and
 * records the version once. Every refusal is named (docs/modules.md).
 */
export const publishModuleVersion = defineCommand({
  name: 'fleet.publishModuleVersion',
  exposure: ['edge'],
  schema: PublishModuleVersionCommand,
  aggregate: moduleAggregate,
  aggregateId: (command) => command.module,
  dependencies: async (_command, load) => ({ publishers: await load(publishersRef, PUBLISHERS_ID, { fresh: true }) }),
  decide(command, state, { dependencies: { publishers } }): ModuleEvent[] {
    const { module, version, bundleSha256, bundle } = command;
    if (createHash('sha256').update(bundle).digest('hex') !== bundleSha256) {
      throw new DomainError('BUNDLE_NOT_STORED', `the bytes handed for blob ${bundleSha256} are not that blob`);
    }
    const published = state.versions.find((v) => v.version === version);
    if (published) {
      throw new DomainError('MODULE_VERSION_EXISTS', `${module} ${version} is already published (manifest ${published.manifestSha256}): publish a new version`);
    }
    const verdict = verifyModuleBundle(bundle, trustedPublisherKeys(publishers));
    if (!verdict.ok) throw new DomainError(verdict.code, verdict.message);
    const { manifest } = verdict;
    if (manifest.name !== module || manifest.version !== version) {
      throw new DomainError('MODULE_NAME_MISMATCH', `the bundle's signed manifest is ${manifest.name} ${manifest.version}, not ${module} ${version}`);
    }
    return [
      {
        type: 'ModuleVersionPublished',
        data: {
          module,
          version,
          bundleSha256,
          manifestSha256: verdict.manifestSha256,
          publisherId: verdict.publisherId,
          publicKey: verdict.publicKey,
          manifest,
        },
      },
    ];
  },
});
