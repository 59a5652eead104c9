import { z } from 'zod';

/**
 * What the closure resolver reads of a published module version: the fields a module manifest carries under the same
 * names (`name`, `version`, `provides`, `requires`, `exclusive`). The manifest (files, signature, probes) is defined
 * apart; this is only the part that decides which versions may run together, so the resolver stays pure.
 */

/** A module or capability name: lower case, digits, `-`, `_`, `.` (it appears in paths and subjects). */
export const ModuleName = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/);
export const CapabilityName = z.string().regex(/^[a-z0-9][a-z0-9._:-]{0,63}$/);
/** A semver version (`1.2.3`, `2.0.0-rc.1`); checked with the `semver` package where it is read. */
export const ModuleVersion = z.string().min(5).max(64);
/** A semver range (`^1.2`, `>=2 <3`, `*`, `=1.2.3`). */
export const VersionRange = z.string().min(1).max(128);

/**
 * One thing a module version (or a template) needs: a named module whose version is in `range`, or a capability that
 * some module in the plan provides. A capability has no version of its own, so its `range` is matched against the
 * version of the module that provides it (`*` for any).
 */
export const ModuleRequirement = z
  .object({ module: ModuleName.optional(), capability: CapabilityName.optional(), range: VersionRange })
  .strict()
  .refine((r) => (r.module === undefined) !== (r.capability === undefined), 'exactly one of module or capability');
export type ModuleRequirement = z.infer<typeof ModuleRequirement>;

export const PublishedModuleVersion = z
  .object({
    name: ModuleName,
    version: ModuleVersion,
    provides: z.array(CapabilityName).default([]),
    requires: z.array(ModuleRequirement).default([]),
    /** Capabilities this module claims alone: no other module of the plan may provide or claim them. */
    exclusive: z.array(CapabilityName).default([]),
  })
  .strict();
export type PublishedModuleVersion = z.infer<typeof PublishedModuleVersion>;

export const TemplateName = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/);

/** A template: module requirements and capabilities, and the templates it includes (composition, no cycles). */
export const TemplateSpec = z
  .object({
    name: TemplateName,
    requires: z.array(ModuleRequirement).default([]),
    includes: z.array(TemplateName).default([]),
  })
  .strict();
export type TemplateSpec = z.infer<typeof TemplateSpec>;

/** A manual assignment: this host runs exactly this version of the module (on top of its template). */
export const ModulePin = z.object({ module: ModuleName, version: ModuleVersion }).strict();
export type ModulePin = z.infer<typeof ModulePin>;

/** The per-host pinned plan: module name -> version, keys in code-point order. */
export const ClosurePlan = z.record(ModuleName, ModuleVersion);
export type ClosurePlan = z.infer<typeof ClosurePlan>;

/** Who placed a requirement: `template:<name>`, `pin`, or `module:<name>@<version>`. */
export const RequirementSource = z.string();

/** A requirement and who placed it, as a conflict lists them. */
export const PlacedRequirement = z.object({ requirement: z.string(), from: RequirementSource }).strict();
export type PlacedRequirement = z.infer<typeof PlacedRequirement>;

/** The stable codes of closure conflicts (clients match on `code`). */
export const ClosureConflictCode = z.enum([
  'TEMPLATE_CYCLE',
  'TEMPLATE_UNKNOWN',
  'MODULE_UNKNOWN',
  'RANGE_UNSATISFIABLE',
  'CAPABILITY_MISSING',
  'EXCLUSIVE_CONFLICT',
  'CLOSURE_UNSTABLE',
]);
export type ClosureConflictCode = z.infer<typeof ClosureConflictCode>;

export const ClosureConflict = z.discriminatedUnion('code', [
  /** Templates that include each other; `cycle` starts at its smallest name and ends where it started. */
  z.object({ code: z.literal('TEMPLATE_CYCLE'), cycle: z.array(TemplateName) }).strict(),
  z.object({ code: z.literal('TEMPLATE_UNKNOWN'), template: TemplateName, from: RequirementSource }).strict(),
  /** A module nothing in the catalogue publishes. */
  z.object({ code: z.literal('MODULE_UNKNOWN'), module: ModuleName, requirements: z.array(PlacedRequirement) }).strict(),
  /** No published version satisfies every requirement on the module at once. */
  z.object({ code: z.literal('RANGE_UNSATISFIABLE'), module: ModuleName, requirements: z.array(PlacedRequirement) }).strict(),
  /** No published module version provides the capability within the range. */
  z.object({ code: z.literal('CAPABILITY_MISSING'), capability: CapabilityName, requirements: z.array(PlacedRequirement) }).strict(),
  /** Two or more modules of the plan provide or claim a capability one of them claims exclusively. */
  z.object({ code: z.literal('EXCLUSIVE_CONFLICT'), capability: CapabilityName, modules: z.array(z.string()) }).strict(),
  /** The choices did not settle within the round budget (requirements that keep undoing each other). */
  z.object({ code: z.literal('CLOSURE_UNSTABLE'), rounds: z.number().int() }).strict(),
]);
export type ClosureConflict = z.infer<typeof ClosureConflict>;

export type ClosureResult = { ok: true; plan: ClosurePlan } | { ok: false; conflicts: ClosureConflict[] };

/** A dry run: what applying the plan would change on a host, by module in code-point order. */
export const PinDiff = z
  .object({
    added: z.array(z.object({ module: ModuleName, to: ModuleVersion }).strict()),
    removed: z.array(z.object({ module: ModuleName, from: ModuleVersion }).strict()),
    changed: z.array(z.object({ module: ModuleName, from: ModuleVersion, to: ModuleVersion }).strict()),
  })
  .strict();
export type PinDiff = z.infer<typeof PinDiff>;
