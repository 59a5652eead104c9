import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { templateEvents, type TemplateEvent } from '../../../schemas/fleet/templateEvents.ts';
import type { TemplateState } from '../../../schemas/fleet/templateState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** A template (`bc.evt.fleet.template.<templateId>`): module requirements, capabilities, included templates. */
export const templateAggregate = defineAggregate<TemplateState, TemplateEvent>({
  module: 'fleet',
  type: 'template',
  initialState: { exists: false },
  catalog: new EventCatalog(templateEvents),
  evolve(_state, event) {
    switch (event.type) {
      case 'TemplateDefined':
        return { exists: true, ...event.data };
    }
  },
});
