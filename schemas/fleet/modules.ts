import { z } from 'zod';
import { aggregateRef } from '../aggregateRef.ts';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { ModuleManifest, ModuleName, ModuleVersion } from './moduleManifest.ts';

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256');

/**
 * `fleet.publishModuleVersion`: publishes the bundle stored in the blob store under `bundleSha256` as `version` of
 * `module`. The bundle must verify against the publisher keys trusted now, name this module and version in its signed
 * manifest, and be a version not yet published.
 */
export const PublishModuleVersion = z.object({ module: ModuleName, version: ModuleVersion, bundleSha256: Sha256 }).strict();
export type PublishModuleVersion = z.infer<typeof PublishModuleVersion>;

/** The largest bundle the control plane publishes. */
export const MAX_BUNDLE_BYTES = 256 * 1024 * 1024;

/**
 * `fleet.publishModuleVersion` as the publishing route sends it on its own in-process bus (an `edge` command): the
 * request plus the bundle's bytes, read from the blob store by `bundleSha256`, so the decider verifies the bundle
 * itself against the publisher keys it loads. Never carried over NATS.
 */
export const PublishModuleVersionCommand = PublishModuleVersion.extend({
  bundle: z.custom<Uint8Array>((v) => v instanceof Uint8Array && v.byteLength <= MAX_BUNDLE_BYTES, 'must be the bundle bytes (at most 256 MiB)'),
}).strict();
export type PublishModuleVersionCommand = z.infer<typeof PublishModuleVersionCommand>;

/**
 * A version published: its signed manifest (what hosts verify files against and the closure resolver reads), the
 * sha256 of the manifest's canonical bytes (what heartbeats report), the bundle's blob and who signed it, with which of
 * the publisher's keys (`publicKey`; absent from versions published before it was recorded).
 */
export const ModuleVersionPublished = defineEvent(
  'ModuleVersionPublished',
  z.object({
    module: z.string(),
    version: z.string(),
    bundleSha256: z.string(),
    manifestSha256: z.string(),
    publisherId: z.string(),
    publicKey: z.string().optional(),
    manifest: ModuleManifest,
  }),
);
export const moduleEvents = [ModuleVersionPublished] as const;
export type ModuleEvent = EventOf<(typeof moduleEvents)[number]>;

export interface PublishedModuleVersion {
  readonly version: string;
  readonly bundleSha256: string;
  readonly manifestSha256: string;
  readonly publisherId: string;
  readonly manifest: ModuleManifest;
}

/** A module (`bc.evt.fleet.module.<name>`): its published versions, in publishing order. */
export interface ModuleState {
  readonly versions: readonly PublishedModuleVersion[];
}

/** What other modules read of a module (templates, rollouts). */
export const moduleRef = aggregateRef<ModuleState>('fleet', 'module');
