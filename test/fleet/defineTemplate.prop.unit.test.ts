import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TemplateState } from '../../schemas/fleet/templateState.ts';
import type { AggregateLoader } from '../../services/platform/commands/commandDefinition.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { defineTemplate } from '../../services/fleet/template/defineTemplate.ts';

const NAMES = ['a', 'b', 'c', 'd', 'e', 'f'] as const;
const context = { commandId: 'cmd-t-02', actor: 'spec', now: '2026-12-06T00:00:00.000Z' };

/** Stored templates: each name defined or not, each defined one including some names (possibly undefined ones). */
const stored = fc.dictionary(fc.constantFrom(...NAMES), fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: 3 }));

describe('fleet.defineTemplate (properties)', () => {
  it('refuses exactly when what the template reaches holds a loop (TEMPLATE_CYCLE) or an undefined template (TEMPLATE_UNKNOWN)', async () => {
    await fc.assert(
      fc.asyncProperty(stored, fc.constantFrom(...NAMES), fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: 3 }), async (db, id, includes) => {
        const graph = new Map<string, readonly string[]>(Object.entries(db));
        graph.set(id, includes);
        // Reference walks over the graph as it would be after the definition.
        const reach = (from: readonly string[]): Set<string> => {
          const seen = new Set<string>();
          const stack = [...from];
          while (stack.length > 0) {
            const name = stack.pop()!;
            if (seen.has(name)) continue;
            seen.add(name);
            stack.push(...(graph.get(name) ?? []));
          }
          return seen;
        };
        const reachable = reach([id]);
        const cycle = [...reachable].some((name) => reach(graph.get(name) ?? []).has(name));
        const unknown = [...reachable].some((name) => !graph.has(name));
        const load = (async (_aggregate: unknown, name: string) =>
          graph.has(name) && name !== id
            ? ({ exists: true, templateId: name, requires: [], includes: [...graph.get(name)!] } satisfies TemplateState)
            : ({ exists: false } satisfies TemplateState)) as AggregateLoader;
        const command = defineTemplate.schema.parse({ templateId: id, includes });
        const dependencies = await defineTemplate.dependencies!(command, load);
        let code: string | undefined;
        try {
          defineTemplate.decide(command, { exists: false }, { ...context, dependencies });
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          code = err.code;
        }
        // A loop among templates the new one only reaches is refused too: no host's closure could expand it.
        expect(code).toBe(cycle ? 'TEMPLATE_CYCLE' : unknown ? 'TEMPLATE_UNKNOWN' : undefined);
      }),
      { numRuns: 300 },
    );
  });
});
