import semver from 'semver';
import { z } from 'zod';
import { ModuleRequirement, TemplateName } from './closure.ts';

/** How many templates one definition may reach through its includes (the decider loads each to look for cycles). */
export const TEMPLATE_INCLUDE_REACH_MAX = 256;

/**
 * `fleet.defineTemplate`: defines or replaces a template. Nothing changes on hosts until a rollout or an explicit
 * apply; a range that does not parse is refused here, one nothing satisfies when the closure is resolved.
 */
export const DefineTemplate = z
  .object({
    templateId: TemplateName,
    requires: z
      .array(ModuleRequirement)
      .max(256)
      .default([])
      .refine((rs) => rs.every((r) => semver.validRange(r.range) !== null), { message: 'a range is not a semver range' }),
    includes: z.array(TemplateName).max(64).default([]),
  })
  .strict();
export type DefineTemplate = z.input<typeof DefineTemplate>;
