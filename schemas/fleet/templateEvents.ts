import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { ModuleRequirement, TemplateName } from './closure.ts';

/** A template defined or redefined: its module requirements and capabilities, and the templates it includes. */
export const TemplateDefined = defineEvent(
  'TemplateDefined',
  z.object({ templateId: TemplateName, requires: z.array(ModuleRequirement), includes: z.array(TemplateName) }),
);

export const templateEvents = [TemplateDefined] as const;
export type TemplateEvent = EventOf<(typeof templateEvents)[number]>;
