import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModulePin } from '../../schemas/fleet/closure.ts';
import { assignTemplate } from '../../services/fleet/assignment/assignmentCommands.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { closureInput, shuffled, shuffledInput } from './closureArbitraries.ts';
import { type FakeLog, loaderOf } from './assignmentLog.ts';

const context = { commandId: 'cmd-a-02', actor: 'spec', now: '2026-12-06T00:00:00.000Z' };

/** The decision on a log, as data: the events, or the refusal's code and issues. */
async function decision(fake: FakeLog, pins: readonly ModulePin[]) {
  const command = assignTemplate.schema.parse({ nodeId: 'n1', template: 't', pins });
  const dependencies = await assignTemplate.dependencies!(command, loaderOf(fake));
  try {
    return { events: assignTemplate.decide(command, { exists: false }, { ...context, dependencies }) };
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code, issues: err.issues };
    throw err;
  }
}

describe('fleet.assignTemplate (properties)', () => {
  it('decides the same, whatever order the templates, the published versions and the pins arrive in', async () => {
    await fc.assert(
      fc.asyncProperty(closureInput, fc.integer(), fc.integer(), async (input, seedA, seedB) => {
        const arrival = (seed: number) => (type: string, id: string) => shuffled([0, 1, 2, 3], seed + type.length + id.charCodeAt(0))[0]!;
        const logOf = (seed: number): FakeLog => {
          const shuffledIn = shuffledInput(input, seed);
          return { nodes: { n1: 'deployed' }, templates: shuffledIn.templates, catalogue: shuffledIn.catalogue, delay: arrival(seed) };
        };
        const a = await decision(logOf(seedA), shuffled(input.pins, seedA));
        const b = await decision(logOf(seedB), shuffled(input.pins, seedB));
        expect(b).toEqual(a);
        // Either a plan that holds every pin, or a refusal naming at least one conflict.
        if (a.events !== undefined) {
          const plan = (a.events[0]!.data as { plan: Record<string, string> }).plan;
          for (const pin of input.pins) expect(plan[pin.module]).toBe(pin.version);
        } else {
          expect(a.code).toBe('CLOSURE_CONFLICT');
          expect(a.issues!.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 150 },
    );
  });
});
