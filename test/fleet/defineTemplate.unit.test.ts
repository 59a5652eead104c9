import { describe, expect, it } from 'vitest';
import type { PublishedModuleVersion } from '../../schemas/fleet/closure.ts';
import type { TemplateState } from '../../schemas/fleet/templateState.ts';
import type { AggregateLoader } from '../../services/platform/commands/commandDefinition.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { defineTemplate } from '../../services/fleet/template/defineTemplate.ts';
import { dryRunAssignment } from '../../services/fleet/template/dryRun.ts';
import { templateAggregate } from '../../services/fleet/template/template.ts';

const context = { commandId: 'cmd-t-01', actor: 'spec', now: '2026-12-06T00:00:00.000Z' };

/** Templates as the log holds them, read through the loader the kernel would pass. */
function storedTemplates(templates: Record<string, { includes?: string[] }>): AggregateLoader {
  return (async (_aggregate: unknown, id: string) =>
    Object.hasOwn(templates, id)
      ? ({ exists: true, templateId: id, requires: [], includes: templates[id]!.includes ?? [] } satisfies TemplateState)
      : ({ exists: false } satisfies TemplateState)) as AggregateLoader;
}

async function decide(payload: unknown, stored: Record<string, { includes?: string[] }>, state: TemplateState = { exists: false }) {
  const command = defineTemplate.schema.parse(payload);
  const dependencies = await defineTemplate.dependencies!(command, storedTemplates(stored));
  try {
    return { events: defineTemplate.decide(command, state, { ...context, dependencies }) };
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code, issues: err.issues };
    throw err;
  }
}

describe('fleet.defineTemplate', () => {
  it('defines a template whose includes exist and close no loop', async () => {
    const result = await decide({ templateId: 'web', requires: [{ module: 'nginx', range: '^1.24' }], includes: ['base'] }, { base: {} });
    expect(result).toEqual({
      events: [{ type: 'TemplateDefined', data: { templateId: 'web', requires: [{ module: 'nginx', range: '^1.24' }], includes: ['base'] } }],
    });
    const state = templateAggregate.evolve({ exists: false }, result.events![0]!);
    expect(await decide({ templateId: 'web', requires: [{ module: 'nginx', range: '^1.24' }], includes: ['base'] }, { base: {} }, state)).toEqual({
      events: [],
    });
  });

  it('TEMPLATE_CYCLE: refuses a template that would include itself through stored templates, naming the loop', async () => {
    const result = await decide({ templateId: 'base', includes: ['web'] }, { web: { includes: ['mid'] }, mid: { includes: ['base'] } });
    expect(result).toEqual({ code: 'TEMPLATE_CYCLE', issues: [{ path: 'TEMPLATE_CYCLE', message: 'base -> web -> mid -> base' }] });
  });

  it('TEMPLATE_UNKNOWN: refuses an include that is not defined, and lists it with a cycle in the same answer', async () => {
    expect(await decide({ templateId: 'web', includes: ['nowhere'] }, {})).toEqual({
      code: 'TEMPLATE_UNKNOWN',
      issues: [{ path: 'TEMPLATE_UNKNOWN', message: 'nowhere (from template:web)' }],
    });
    const both = await decide({ templateId: 'web', includes: ['nowhere', 'web'] }, {});
    expect(both.code).toBe('TEMPLATE_CYCLE');
    expect(both.issues?.map((i) => i.path).sort()).toEqual(['TEMPLATE_CYCLE', 'TEMPLATE_UNKNOWN']);
  });

  it('refuses a range that is not a semver range at validation', () => {
    expect(defineTemplate.schema.safeParse({ templateId: 'web', requires: [{ module: 'nginx', range: 'latest!' }] }).success).toBe(false);
  });
});

describe('dry run of an assignment', () => {
  const catalogue: PublishedModuleVersion[] = [
    { name: 'nginx', version: '1.24.0', provides: [], requires: [], exclusive: [] },
    { name: 'nginx', version: '1.26.1', provides: [], requires: [], exclusive: [] },
  ];
  const templates = [{ name: 'web', requires: [{ module: 'nginx', range: '^1.24' }], includes: [] }];

  it('per host: the plan and the diff from what it runs, or every conflict and no diff', () => {
    expect(
      dryRunAssignment({
        template: 'web',
        templates,
        catalogue,
        hosts: [
          { host: 'vm2', current: {}, pins: [{ module: 'nginx', version: '2.0.0' }] },
          { host: 'vm1', current: { nginx: '1.24.0' }, pins: [] },
        ],
      }),
    ).toEqual([
      {
        host: 'vm1',
        result: { ok: true, plan: { nginx: '1.26.1' } },
        diff: { added: [], removed: [], changed: [{ module: 'nginx', from: '1.24.0', to: '1.26.1' }] },
      },
      {
        host: 'vm2',
        result: {
          ok: false,
          conflicts: [
            {
              code: 'RANGE_UNSATISFIABLE',
              module: 'nginx',
              requirements: [
                { requirement: '=2.0.0', from: 'pin' },
                { requirement: '^1.24', from: 'template:web' },
              ],
            },
          ],
        },
        diff: null,
      },
    ]);
  });
});
