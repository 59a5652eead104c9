import { z } from 'zod';
import { ClosurePlan, ModulePin, ModuleRequirement } from './closure.ts';
import { ModuleManifest } from './moduleManifest.ts';

/** A published version of a module, as the `modules` read model serves it. */
export const ModuleVersionView = z.object({
  module: z.string(),
  version: z.string(),
  bundleSha256: z.string(),
  manifestSha256: z.string(),
  publisherId: z.string(),
  /** The publisher key the signed manifest verified against; null in a read model built before keys were recorded. */
  signingKey: z.string().nullable(),
  publishedAt: z.string(),
  publishedBy: z.string(),
  manifest: ModuleManifest,
});
export type ModuleVersionView = z.infer<typeof ModuleVersionView>;

/** A module: how many versions it has and the one published last (not necessarily the highest). */
export const ModuleView = z.object({
  name: z.string(),
  versionCount: z.number().int(),
  lastVersion: z.string(),
  lastPublishedAt: z.string(),
});
export type ModuleView = z.infer<typeof ModuleView>;

/** A module publisher and the state of its key. */
export const PublisherView = z.object({
  publisherId: z.string(),
  publicKey: z.string(),
  status: z.enum(['active', 'revoked']),
  retiredKeys: z.array(z.string()),
  updatedAt: z.string(),
});
export type PublisherView = z.infer<typeof PublisherView>;

/** A template as the `modules` read model serves it: its requirements and includes as last defined. */
export const TemplateView = z.object({
  templateId: z.string(),
  requires: z.array(ModuleRequirement),
  includes: z.array(z.string()),
  definedAt: z.string(),
  definedBy: z.string(),
});
export type TemplateView = z.infer<typeof TemplateView>;

/** A host's assignment: the template and pins its plan was resolved from, the plan and its digest. */
export const AssignmentView = z.object({
  nodeId: z.string(),
  template: z.string().nullable(),
  pins: z.array(ModulePin),
  plan: ClosurePlan,
  planDigest: z.string(),
  assignedAt: z.string(),
  assignedBy: z.string(),
});
export type AssignmentView = z.infer<typeof AssignmentView>;
