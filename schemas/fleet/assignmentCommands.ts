import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { ModulePin, ModuleName, ModuleVersion, TemplateName } from './closure.ts';

/** How many modules one host's closure may load (the template's, the pins', and their `requires` by name, transitively). */
export const ASSIGNMENT_MODULE_REACH_MAX = 256;

/** A host's manual assignments: at most one pin per module. */
export const HostPins = z
  .array(ModulePin)
  .max(64)
  .refine((pins) => new Set(pins.map((p) => p.module)).size === pins.length, { message: 'a module is pinned twice' });

/**
 * `fleet.assignTemplate`: the host runs this template's closure. `pins` replaces the host's manual pins when given and
 * keeps them when absent. Assigning the same template again re-resolves it: the way a host picks up a redefined
 * template or newly published versions (nothing does that on its own).
 */
export const AssignTemplate = z.object({ nodeId: ResourceId, template: TemplateName, pins: HostPins.optional() }).strict();
export type AssignTemplate = z.infer<typeof AssignTemplate>;

/** `fleet.pinModule`: the host runs exactly this version of the module, on top of its template. */
export const PinModule = z.object({ nodeId: ResourceId, module: ModuleName, version: ModuleVersion }).strict();
export type PinModule = z.infer<typeof PinModule>;

/** `fleet.unpinModule`: the host's template decides the module's version again (or the module leaves the plan). */
export const UnpinModule = z.object({ nodeId: ResourceId, module: ModuleName }).strict();
export type UnpinModule = z.infer<typeof UnpinModule>;

/** `fleet.applyPlan`: the host installs its pinned plan now (each module it does not already report at that version). */
export const ApplyHostPlan = z.object({ nodeId: ResourceId }).strict();
export type ApplyHostPlan = z.infer<typeof ApplyHostPlan>;

/** `POST /v1/fleet/assignments/:nodeId/dry-run`: what assigning would give, from the host's current assignment. */
export const AssignmentDryRunRequest = z.object({ template: TemplateName.optional(), pins: HostPins.optional() }).strict();
export type AssignmentDryRunRequest = z.infer<typeof AssignmentDryRunRequest>;
