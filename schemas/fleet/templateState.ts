import { aggregateRef } from '../aggregateRef.ts';
import type { ModuleRequirement } from './closure.ts';

export type TemplateState =
  | { readonly exists: false }
  | { readonly exists: true; readonly templateId: string; readonly requires: readonly ModuleRequirement[]; readonly includes: readonly string[] };

/** What another module may read of a template (`bc.evt.fleet.template.<templateId>`). */
export const templateRef = aggregateRef<TemplateState>('fleet', 'template');
