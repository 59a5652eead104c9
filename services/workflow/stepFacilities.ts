import Mustache from 'mustache';
import type { BlobStore } from '../blobs/blobStore.ts';
import type { StepFacilities } from '../../plugins/sdk/stepFacilities.ts';

import { TerminalError } from '../../plugins/sdk/stepErrors.ts';
import type { JoinAttestorName } from '../../schemas/trust/joinTokens.ts';
import { mintJoinToken, type CommandSender } from '../trust/joinToken/mint.ts';

/**
 * The facilities of one step attempt on one node; ids derive from the attempt so a resumed attempt reuses its commands.
 * `mint` runs `pki.createJoinToken` in-process (it is never served over NATS).
 */
export function stepFacilities(
  mint: CommandSender,
  blobs: () => Promise<BlobStore>,
  node: { nodeId: string; siteId: string },
  /** How the tokens its steps mint are attested: `provisioned` in a plugin's worker, `issued` for the built-in steps. */
  mintsAs: JoinAttestorName = 'issued',
): StepFacilities {
  return {
    pki: {
      mintJoinToken: async ({ role, expect, ttlSeconds = 3_600 }) => {
        const token = await mintJoinToken(mint, {
          role,
          siteId: node.siteId,
          nodeId: node.nodeId,
          ttlSeconds,
          attestor: mintsAs,
          ...(expect ? { expect } : {}),
        });
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
  path === '.'
    ? values
    : path.split('.').reduce<unknown>((v, key) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined), values);
