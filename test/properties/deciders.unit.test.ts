import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { eventCatalog } from '../../schemas/events.ts';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import { nodeStates } from '../../schemas/metal/nodeState.ts';
import type { SiteEvent } from '../../schemas/site/events.ts';
import { nodeAggregate, type NodeAggregateState } from '../../services/metal/node/node.ts';
import { siteAggregate } from '../../services/site/site/site.ts';
import { commandSequenceArb, foldStored, simulate } from '../arbitraries/backbone.ts';
import { anyNodeEventArb, metalEventArb, siteEventArb } from '../arbitraries/events.ts';
import { planWorkload, workloadArb } from '../arbitraries/workload.ts';

const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
};

/** What any reachable node state must satisfy. */
function expectNodeInvariants(state: NodeAggregateState, events: readonly MetalEvent[]) {
  const enrolls = events.filter((e) => e.type === 'NodeEnrolled');
  if (enrolls.length === 0) {
    expect(state).toEqual({ exists: false });
    return;
  }
  expect(state.exists).toBe(true);
  if (!state.exists) return;
  const lastEnroll = enrolls.at(-1)!;
  expect(state).toMatchObject({ nodeId: lastEnroll.data.nodeId, siteId: lastEnroll.data.siteId, state: 'enrolled' });
  expect(typeof state.maintenance).toBe('boolean');
  if (!state.maintenance) expect(state.maintenanceReason).toBeNull();
  const afterEnroll = events.slice(events.lastIndexOf(lastEnroll) + 1).filter((e) => e.type === 'NodeMaintenanceSet');
  const last = afterEnroll.at(-1);
  expect(state.maintenance).toBe(last ? last.data.on : false);
  expect(state.maintenanceReason).toBe(last?.data.on ? last.data.reason : null);
}

describe('evolve', () => {
  test.prop([fc.array(metalEventArb, { maxLength: 30 })])('node evolve folds any event sequence without throwing or mutating', (events) => {
    deepFreeze(events);
    const state = events.reduce((s, e) => nodeAggregate.evolve(deepFreeze(s), e), nodeAggregate.initialState);
    expectNodeInvariants(state, events);
  });

  test.prop([fc.array(anyNodeEventArb, { maxLength: 40 })])('node evolve folds any sequence of every node event type into a valid state', (events) => {
    deepFreeze(events);
    const state = events.reduce((s, e) => nodeAggregate.evolve(deepFreeze(s), e), nodeAggregate.initialState);
    expect(state).toBeDefined();
    if (!events.some((e) => e.type === 'NodeEnrolled')) {
      expect(state).toEqual({ exists: false });
      return;
    }
    if (!state.exists) throw new Error('enrolled node does not exist');
    expect(nodeStates).toContain(state.state);
    expect(typeof state.maintenance).toBe('boolean');
    if (!state.maintenance) expect(state.maintenanceReason).toBeNull();
    const lastEnroll = events.findLast((e) => e.type === 'NodeEnrolled')!;
    expect(state).toMatchObject({ nodeId: lastEnroll.data.nodeId, siteId: lastEnroll.data.siteId });
  });

  test.prop([fc.array(siteEventArb, { maxLength: 10 })])('site evolve folds any event sequence into the last created site', (events) => {
    deepFreeze(events);
    const state = events.reduce((s, e) => siteAggregate.evolve(deepFreeze(s), e), siteAggregate.initialState);
    const last = events.at(-1);
    expect(state).toEqual(last ? { exists: true, ...last.data } : { exists: false });
  });

  test.prop([fc.array(fc.oneof(anyNodeEventArb, siteEventArb), { maxLength: 20 })])(
    'evolve gives the same state for events read back through the catalog as for the events decided',
    (events) => {
      const stored = events.map((e) => JSON.parse(JSON.stringify(eventCatalog.write(e))));
      const metal = events.filter((e): e is MetalEvent => e.type !== 'SiteCreated');
      const storedMetal = stored.filter((e) => e.type !== 'SiteCreated');
      expect(foldStored(nodeAggregate, storedMetal)).toEqual(metal.reduce(nodeAggregate.evolve, nodeAggregate.initialState));
      const sites = events.filter((e): e is SiteEvent => e.type === 'SiteCreated');
      expect(
        foldStored(
          siteAggregate,
          stored.filter((e) => e.type === 'SiteCreated'),
        ),
      ).toEqual(sites.reduce(siteAggregate.evolve, siteAggregate.initialState));
    },
  );
});

describe('decide', () => {
  test.prop([commandSequenceArb()])('decide refuses or answers [] for a command whose events were just applied', async (commands) => {
    const sim = await simulate(commands);
    for (const { commandId, result } of sim.redecisions) {
      const ok = 'code' in result || result.events.length === 0;
      expect(ok, `${commandId} decided again gave ${JSON.stringify(result)}`).toBe(true);
    }
  });

  test.prop([workloadArb({ maxLength: 50 })], { numRuns: 40 })(
    'decide refuses or answers [] for any command whose events were just applied, engine and VPS commands too',
    async (intents) => {
      const { sim } = await planWorkload(intents);
      for (const { commandId, result } of sim.redecisions) {
        const ok = 'code' in result || result.events.length === 0;
        expect(ok, `${commandId} decided again gave ${JSON.stringify(result)}`).toBe(true);
      }
    },
  );

  test.prop([commandSequenceArb()])('decide output folds into the aggregate states the model reports', async (commands) => {
    const sim = await simulate(commands);
    const bySubject = new Map<string, typeof sim.batches>();
    for (const b of sim.batches) bySubject.set(b.subject, [...(bySubject.get(b.subject) ?? []), b]);
    for (const [subject, batches] of bySubject) {
      const aggregate = subject.startsWith('bc.evt.site.') ? siteAggregate : nodeAggregate;
      expect(
        foldStored(
          aggregate as typeof nodeAggregate,
          batches.flatMap((b) => b.batch.events),
        ),
      ).toEqual(sim.states.get(subject));
    }
  });

  test.prop([commandSequenceArb()])('decide never lets one command id append twice or a retry append after its original', async (commands) => {
    const sim = await simulate(commands);
    const ids = sim.messages.map((m) => m.messageId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(sim.messages.map((m) => m.seq)).toEqual(sim.messages.map((_, i) => i + 1));
    commands.forEach((c, i) => {
      const original = c.retryOf === undefined ? undefined : sim.outcomes[c.retryOf];
      if (original?.kind === 'appended') expect(sim.outcomes[i]).toEqual({ kind: 'duplicate', seq: original.seq });
    });
  });

  test.prop([commandSequenceArb({ minLength: 5 })])('decide refuses only with the codes the deciders declare', async (commands) => {
    const sim = await simulate(commands);
    for (const o of sim.outcomes) if (o.kind === 'refused') expect(['ALREADY_EXISTS', 'PRECONDITION_FAILED', 'NOT_FOUND', 'LABEL_RESERVED']).toContain(o.code);
  });
});
