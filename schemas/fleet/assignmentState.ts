import { aggregateRef } from '../aggregateRef.ts';
import type { ClosurePlan, ModulePin } from './closure.ts';

/** A host's assignment (`bc.evt.fleet.assignment.<nodeId>`): what its plan was resolved from, and the plan. */
export type AssignmentState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly nodeId: string;
      readonly template: string | null;
      readonly pins: readonly ModulePin[];
      readonly plan: ClosurePlan;
      readonly planDigest: string;
    };

/** What another module may read of a host's assignment (rollouts). */
export const assignmentRef = aggregateRef<AssignmentState>('fleet', 'assignment');
