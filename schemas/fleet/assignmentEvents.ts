import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { ClosurePlan, ModulePin, TemplateName } from './closure.ts';

/**
 * A host's plan: the template and manual pins it was resolved from, one pinned version per module, and the plan's
 * digest (sha256 of its canonical JSON: hosts with the same plan have the same digest).
 */
export const HostPlanAssigned = defineEvent(
  'HostPlanAssigned',
  z.object({
    nodeId: z.string(),
    template: TemplateName.nullable(),
    pins: z.array(ModulePin),
    plan: ClosurePlan,
    planDigest: z.string(),
  }),
);

/**
 * An operator asked that the host install its pinned plan now (`fleet.applyPlan`): the plan as it was then, and the
 * request's command id, from which the rollout controller derives the id of each `module.apply` it sends for it.
 */
export const HostPlanApplyRequested = defineEvent(
  'HostPlanApplyRequested',
  z.object({
    nodeId: z.string(),
    requestId: z.string(),
    plan: ClosurePlan,
    planDigest: z.string(),
  }),
);

export const assignmentEvents = [HostPlanAssigned, HostPlanApplyRequested] as const;
export type AssignmentEvent = EventOf<(typeof assignmentEvents)[number]>;
