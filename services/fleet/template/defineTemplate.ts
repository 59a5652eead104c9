import type { TemplateSpec } from '../../../schemas/fleet/closure.ts';
import { DefineTemplate, TEMPLATE_INCLUDE_REACH_MAX } from '../../../schemas/fleet/templateCommands.ts';
import type { TemplateEvent } from '../../../schemas/fleet/templateEvents.ts';
import { defineCommand, type AggregateLoader } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { templateAggregate } from './template.ts';
import { expandTemplate } from './templateExpansion.ts';

/**
 * The templates a definition reaches through its includes, as stored now (the defined one's own entry is what the
 * command says, not what is stored). Bounded: a definition reaching more than TEMPLATE_INCLUDE_REACH_MAX is refused.
 */
export async function reachableTemplates(command: { templateId: string; includes: readonly string[] }, load: AggregateLoader): Promise<TemplateSpec[]> {
  const specs: TemplateSpec[] = [];
  const seen = new Set<string>([command.templateId]);
  const queue = [...command.includes];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    if (seen.size > TEMPLATE_INCLUDE_REACH_MAX) {
      throw new DomainError('VALIDATION_FAILED', `template ${command.templateId} reaches more than ${TEMPLATE_INCLUDE_REACH_MAX} templates`);
    }
    const state = await load(templateAggregate, name);
    if (!state.exists) continue;
    specs.push({ name, requires: [...state.requires], includes: [...state.includes] });
    queue.push(...state.includes);
  }
  return specs;
}

/**
 * `fleet.defineTemplate`: defines or replaces a template, refusing one that would include itself (TEMPLATE_CYCLE) or
 * that includes an undefined template (TEMPLATE_UNKNOWN); every such conflict is in the error's issues. Two
 * concurrent definitions can still close a loop between them; the closure resolver refuses that one when it plans.
 */
export const defineTemplate = defineCommand({
  name: 'fleet.defineTemplate',
  exposure: ['operator'],
  schema: DefineTemplate,
  aggregate: templateAggregate,
  aggregateId: (command) => command.templateId,
  dependencies: (command, load) => reachableTemplates(command, load),
  decide(command, state, { dependencies }): TemplateEvent[] {
    const self: TemplateSpec = { name: command.templateId, requires: command.requires, includes: command.includes };
    const { conflicts } = expandTemplate(command.templateId, [self, ...dependencies]);
    if (conflicts.length > 0) {
      const code = conflicts.some((c) => c.code === 'TEMPLATE_CYCLE') ? 'TEMPLATE_CYCLE' : 'TEMPLATE_UNKNOWN';
      const issues = conflicts.map((c) => ({
        path: c.code,
        message: c.code === 'TEMPLATE_CYCLE' ? c.cycle.join(' -> ') : c.code === 'TEMPLATE_UNKNOWN' ? `${c.template} (from ${c.from})` : c.code,
      }));
      throw new DomainError(code, `template ${command.templateId}: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, { issues });
    }
    const next = { templateId: command.templateId, requires: command.requires, includes: command.includes };
    if (state.exists && JSON.stringify({ templateId: state.templateId, requires: state.requires, includes: state.includes }) === JSON.stringify(next)) {
      return [];
    }
    return [{ type: 'TemplateDefined', data: next }];
  },
});
