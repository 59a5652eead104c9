import Mustache from 'mustache';
import type { JoinExpectation } from '../../schemas/trust/joinTokens.ts';
import type { BlobStore, StoredBlob } from '../blobs/blobStore.ts';
import { TerminalError } from './stepErrors.ts';
import { mintJoinToken, type CommandSender } from '../trust/joinToken/mint.ts';

/** Join tokens a step may mint, always for its own node and site. */
export interface StepPki {
  /**
   * A single-use join token for an agent of this node (`role` node for an installed host, ramdisk for a ramdisk),
   * bound to `expect` (e.g. the machine's SMBIOS product UUID). The plaintext is returned once and stored nowhere:
   * put it only into what the machine alone reads (an ISO behind a capability URL), never into params or outputs.
   * Default lifetime 1 hour.
   */
  mintJoinToken(options: { role: 'node' | 'ramdisk'; expect?: JoinExpectation; ttlSeconds?: number }): Promise<string>;
}

/** Secrets as references only: a step never sees a plaintext, it names secrets the site agent is granted. */
export interface StepSecrets {
  /** `secret:<id>`, for `httpViaSite`'s `secretHeaders`. */
  ref(secretId: string): string;
}

/** Artefacts a step produces for its machine. */
export interface StepBlobs {
  /** Stores `bytes` under their sha256 and returns an unguessable URL for this node only. */
  put(bytes: Uint8Array, options?: { name?: string }): Promise<StoredBlob>;
}

export interface StepFacilities {
  readonly pki: StepPki;
  readonly secrets: StepSecrets;
  readonly blobs: StepBlobs;
  /** Mustache, without HTML escaping (seeds are YAML and shell, not HTML); a tag naming a missing value fails the step. */
  renderTemplate(template: string, values: Readonly<Record<string, unknown>>): string;
}

/**
 * The facilities of one step attempt on one node; ids derive from the attempt so a resumed attempt reuses its commands.
 * `mint` runs `pki.createJoinToken` in-process (it is never served over NATS).
 */
export function stepFacilities(mint: CommandSender, blobs: () => Promise<BlobStore>, node: { nodeId: string; siteId: string }): StepFacilities {
  return {
    pki: {
      mintJoinToken: async ({ role, expect, ttlSeconds = 3_600 }) => {
        const token = await mintJoinToken(mint, { role, siteId: node.siteId, nodeId: node.nodeId, ttlSeconds, ...(expect ? { expect } : {}) });
        return token.token;
      },
    },
    secrets: { ref: (secretId) => `secret:${secretId}` },
    blobs: { put: async (bytes, options) => (await blobs()).put(node.nodeId, bytes, options?.name) },
    renderTemplate: (template, values) => {
      for (const name of variablesOf(template)) {
        if (lookup(values, name) === undefined) throw new TerminalError('VALIDATION_FAILED', `template needs "${name}", which was not given`);
      }
      return Mustache.render(template, values, {}, { escape: (text: string) => text });
    },
  };
}

function variablesOf(template: string): string[] {
  const names: string[] = [];
  // Top-level value tags only: names inside a section resolve against the section's own value, and a section of a
  // missing value is how a template says "only when given".
  for (const [kind, name] of Mustache.parse(template) as unknown as [string, string][]) if (['name', '&', '{'].includes(kind)) names.push(name);
  return names;
}

const lookup = (values: Readonly<Record<string, unknown>>, path: string) =>
  path === '.' ? values : path.split('.').reduce<unknown>((v, key) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined), values);
