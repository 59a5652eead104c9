import { generateKeyPairSync, sign } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ModuleApplyParams } from '../../daemon/node/modules/moduleHost.ts';
import { buildModuleBundle, type ManifestSigner } from '../../schemas/fleet/buildModuleBundle.ts';
import { verifyModuleBundle } from '../../schemas/fleet/moduleBundle.ts';
import type { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { deployBody, enrollPayload } from './commandPayloads.ts';

/**
 * What the rollout integration test and `npm run bench:rollout` share: a publisher, versions of one module (`resolver`)
 * whose probe runs the module's own binary (or fails on purpose), their publication through the API, and deployed
 * hosts pinned to a first version.
 */
export interface ModuleVersionFixture {
  bundle: Uint8Array;
  params: ModuleApplyParams;
}

export const MODULE = 'resolver';
const text = (s: string) => new TextEncoder().encode(s);

/** A publisher with a fresh Ed25519 key (what `pki.registerPublisher` is sent and what signs the bundles), and its trust entry. */
export function rolloutPublisher(publisherId = 'acme') {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const publisher: ManifestSigner = {
    publisherId,
    publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64'),
    sign: (message) => sign(null, message, privateKey),
  };
  return { publisher, trusted: [{ publisherId: publisher.publisherId, publicKey: publisher.publicKey }] };
}

/** `resolver` at `version`: `bin/resolver` prints its version; its probe runs `probe` (default: calls it through PATH). */
export function resolverVersion(from: ReturnType<typeof rolloutPublisher>, version: string, probe = 'resolver'): ModuleVersionFixture {
  const source = {
    name: MODULE,
    version,
    provides: [],
    requires: [],
    exclusive: [],
    rebootRequired: false,
    probes: [{ name: 'runs', command: probe, shell: 'login' as const }],
  };
  const bundle = buildModuleBundle(source, [{ path: 'bin/resolver', mode: 0o755, data: text(`#!/bin/sh\necho "resolver ${version}"\n`) }], from.publisher);
  const verdict = verifyModuleBundle(bundle, from.trusted);
  if (!verdict.ok) throw new Error(verdict.message);
  const params: ModuleApplyParams = {
    module: MODULE,
    version,
    bundleUrl: 'http://bundles.invalid/b',
    bundleSha256: '0'.repeat(64),
    manifestSha256: verdict.manifestSha256,
    trustedPublishers: from.trusted,
    probeTimeoutMs: 5_000,
  };
  return { bundle, params };
}

/** Registers the publisher, uploads each version's bundle and publishes it: what an operator does before a rollout. */
export async function publishVersions(
  bus: CommandBus,
  app: FastifyInstance,
  from: ReturnType<typeof rolloutPublisher>,
  versions: readonly ModuleVersionFixture[],
): Promise<void> {
  await bus.execute({
    name: 'pki.registerPublisher',
    payload: { publisherId: from.publisher.publisherId, publicKey: from.publisher.publicKey },
    actor: 'test',
  });
  for (const { bundle, params } of versions) {
    const put = await app.inject({
      method: 'PUT',
      url: '/v1/modules/bundles',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from(bundle),
    });
    const published = await app.inject({
      method: 'POST',
      url: '/v1/modules/resolver/versions',
      payload: { version: params.version, bundleSha256: put.json().sha256 },
    });
    if (published.statusCode !== 201) throw new Error(`publishing ${params.version}: ${published.statusCode} ${published.body}`);
  }
}

/**
 * Deploys `nodeId` on `siteId` through the engine's own commands (no workflow runs; the site must exist) and pins
 * `version` of the module on it, as an earlier rollout would have left it.
 */
export async function deployedPinnedHost(bus: CommandBus, nodeId: string, siteId: string, version: string): Promise<void> {
  const run = (name: string, payload: unknown) => bus.execute({ name, payload, actor: 'test' });
  await run('metal.enroll', enrollPayload(nodeId, siteId));
  const workflowOf = (result: Awaited<ReturnType<typeof run>>) => (result.events[0]!.data as { workflowId: string }).workflowId;
  await run('metal.completeOperation', { nodeId, workflowId: workflowOf(await run('metal.startInspection', { nodeId })) });
  await run('metal.completeOperation', { nodeId, workflowId: workflowOf(await run('metal.deploy', deployBody(nodeId))) });
  await run('fleet.pinModule', { nodeId, module: MODULE, version });
}
