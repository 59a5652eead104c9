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

export const assignmentEvents = [HostPlanAssigned] as const;
export type AssignmentEvent = EventOf<(typeof assignmentEvents)[number]>;
