import type { StoredBlob } from '../../schemas/blobs.ts';
import type { JoinExpectation } from '../../schemas/trust/joinTokens.ts';

/**
 * What a step may use besides its node and agents (`StepContext.platform`): the shapes only. The engine builds them
 * for each attempt (`services/workflow/stepFacilities.ts`).
 */

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
