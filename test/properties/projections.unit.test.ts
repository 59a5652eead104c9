import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { applyBatch } from '../../projections/runtime/applyBatch.ts';
import { openWriter } from '../../projections/runtime/readModelDatabase.ts';
import type { NodeAggregateState } from '../../services/metal/node/node.ts';
import { chunk, commandSequenceArb, deliver, deliveryPlanArb, simulate } from '../arbitraries/backbone.ts';
import { dumpAll, dumpTables, projectInMemory } from './tables.ts';

const logArb = commandSequenceArb({ maxLength: 40 });

describe('projections', () => {
  test.prop([logArb, fc.array(fc.nat(), { maxLength: 15 })], { numRuns: 60 })('projections give the same tables for one batch as for any chunking', async (commands, cuts) => {
    const { messages } = await simulate(commands);
    const rebuilt = dumpAll(projectInMemory([messages]));
    expect(dumpAll(projectInMemory(chunk(messages, cuts)))).toEqual(rebuilt);
    expect(dumpAll(projectInMemory(messages.map((m) => [m])))).toEqual(rebuilt);
  });

  test.prop([logArb, deliveryPlanArb], { numRuns: 60 })('projections ignore redelivered, duplicated and reordered old messages', async (commands, plan) => {
    const { messages } = await simulate(commands);
    const rebuilt = dumpAll(projectInMemory([messages]));
    const deliveries = deliver(messages, plan);
    expect(deliveries.flat().length).toBeGreaterThanOrEqual(messages.length);
    expect(dumpAll(projectInMemory(deliveries))).toEqual(rebuilt);
  });

  test.prop([logArb, fc.nat()])('projections apply nothing when a whole prefix is delivered again', async (commands, cut) => {
    const { messages } = await simulate(commands);
    const db = openWriter(':memory:', nodesProjection);
    const upTo = messages.length === 0 ? 0 : 1 + (cut % messages.length);
    applyBatch(db, nodesProjection, messages.slice(0, upTo));
    const before = dumpTables(db);
    applyBatch(db, nodesProjection, [...messages.slice(0, upTo)].reverse());
    expect(dumpTables(db)).toEqual(before);
    db.close();
  });

  test.prop([logArb])('projections agree with the aggregate states the deciders folded', async (commands) => {
    const sim = await simulate(commands);
    const dbs = projectInMemory([sim.messages]);
    const nodes = (dbs.get('nodes')!.prepare('SELECT * FROM nodes ORDER BY node_id').all() as Record<string, unknown>[]).map((r) => ({
      nodeId: r.node_id,
      siteId: r.site_id,
      maintenance: r.maintenance === 1,
      maintenanceReason: r.maintenance_reason,
      macs: JSON.parse(r.macs as string),
    }));
    const states = [...sim.states].filter(([s]) => s.startsWith('bc.evt.metal.node.')).map(([, s]) => s as NodeAggregateState);
    const enrolled = states.flatMap((s) => (s.exists ? [s] : []));
    const expected = enrolled
      .map((s) => ({ nodeId: s.nodeId, siteId: s.siteId, maintenance: s.maintenance, maintenanceReason: s.maintenanceReason, macs: s.macs }))
      .sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
    expect(nodes).toEqual(expected);
    const counts = dbs.get('sites')!.prepare('SELECT site_id AS siteId, node_count AS n FROM sites ORDER BY site_id').all() as { siteId: string; n: number }[];
    for (const { siteId, n } of counts) expect(n).toBe(enrolled.filter((s) => s.siteId === siteId).length);
    dumpAll(dbs);
  });
});
