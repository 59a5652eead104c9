import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { applyBatch } from '../../services/projectors/applyBatch.ts';
import { openWriter } from '../../projections/runtime/readModelDatabase.ts';
import type { NodeAggregateState } from '../../services/metal/node/node.ts';
import { chunk, deliver, deliveryPlanArb } from '../arbitraries/backbone.ts';
import { planWorkload, workloadArb } from '../arbitraries/workload.ts';
import { dumpAll, dumpTables, projectInMemory } from './tables.ts';

// Logs of node operations run by the engine's own commands, secrets, VPS commands, templates and assignments: every
// read model gets rows.
const logArb = workloadArb({ maxLength: 60 });
const simulate = async (intents: Parameters<typeof planWorkload>[0]) => (await planWorkload(intents)).sim;

describe('projections', () => {
  it("workloads reach every read model: workflows that complete and fail, attested wipes, retirements, secrets, VPS instances placed and unplaced, templates, host assignments, node labels and trend buckets (tenants' own among them)", async () => {
    const seen = {
      workflowsCompleted: 0,
      workflowsFailed: 0,
      attestedWipes: 0,
      unattestedWipes: 0,
      retired: 0,
      rescued: 0,
      secrets: 0,
      instances: 0,
      placed: 0,
      unplaced: 0,
      pools: 0,
      templates: 0,
      assignments: 0,
      labels: 0,
      stepDurations: 0,
      wipedBytes: 0,
      capacityQueue: 0,
      failureCodes: 0,
      tenantTrends: 0,
    };
    const runs = fc.sample(logArb, { numRuns: 40, seed: 20_261_202 });
    for (const intents of runs) {
      const sim = await simulate(intents);
      const dbs = projectInMemory([sim.messages]);
      const count = (model: string, sql: string) => ((dbs.get(model)!.prepare(sql).pluck().get() as number) > 0 ? 1 : 0);
      seen.workflowsCompleted += count('workflows', `SELECT count(*) FROM workflows WHERE state = 'completed' AND operation != 'inspect'`);
      seen.workflowsFailed += count('workflows', `SELECT count(*) FROM workflows WHERE state = 'failed'`);
      seen.attestedWipes += count('workflows', `SELECT count(*) FROM workflow_steps WHERE step_id = 'disk.wipe' AND json_extract(output, '$.attested') = 1`);
      seen.unattestedWipes += count('workflows', `SELECT count(*) FROM workflow_steps WHERE step_id = 'disk.wipe' AND json_extract(output, '$.attested') = 0`);
      seen.retired += count('nodes', `SELECT count(*) FROM nodes WHERE state = 'retired'`);
      seen.rescued += count('workflows', `SELECT count(*) FROM workflows WHERE operation = 'rescue' AND state = 'completed'`);
      seen.secrets += count('secrets', `SELECT count(*) FROM secrets`);
      seen.instances += count('vps', `SELECT count(*) FROM vps_instances`);
      seen.placed += count('vps', `SELECT count(*) FROM vps_instances WHERE placement IS NOT NULL`);
      seen.unplaced += sim.batches.some((b) => b.batch.events.some((e) => e.type === 'InstanceUnplaced')) ? 1 : 0;
      seen.pools += count('vps', `SELECT count(*) FROM vps_pools`);
      seen.templates += count('modules', `SELECT count(*) FROM templates`);
      seen.assignments += count('modules', `SELECT count(*) FROM host_assignments`);
      seen.labels += count('nodes', `SELECT count(*) FROM nodes WHERE labels != '{}'`);
      seen.stepDurations += count('trends', `SELECT count(*) FROM trend_step_bins`);
      seen.wipedBytes += count('trends', `SELECT count(*) FROM trend_steps WHERE step_id = 'disk.wipe' AND bytes > 0`);
      seen.capacityQueue += count('trends', `SELECT count(*) FROM trend_capacity WHERE peak_waiting > 0`);
      seen.failureCodes += count('trends', `SELECT count(*) FROM trend_failures`);
      seen.tenantTrends += count('trends', `SELECT count(*) FROM trend_operations WHERE tenant_id != ''`);
      // A tenant's share of a site's queue is never more than the whole of it ('*'), hour by hour.
      const overShare = dbs
        .get('trends')!
        .prepare(
          `SELECT count(*) FROM trend_capacity t JOIN trend_capacity w ON w.site_id = t.site_id AND w.hour = t.hour AND w.tenant_id = '*'
           WHERE t.tenant_id != '*' AND (t.requested > w.requested OR t.admitted > w.admitted OR t.peak_waiting > w.peak_waiting OR t.waiting > w.waiting)`,
        )
        .pluck()
        .get();
      expect(overShare).toBe(0);
      dumpAll(dbs);
    }
    // Not every workload gets everywhere; together they must, or the properties below test empty tables.
    for (const [what, n] of Object.entries(seen)) expect(n, `${what} in ${n} of ${runs.length} workloads`).toBeGreaterThan(0);
    expect(seen.workflowsCompleted).toBeGreaterThan(runs.length / 2);
    expect(seen.pools).toBe(runs.length);
  });

  test.prop([logArb, fc.array(fc.nat(), { maxLength: 15 })], { numRuns: 60 })(
    'projections give the same tables for one batch as for any chunking',
    async (commands, cuts) => {
      const { messages } = await simulate(commands);
      const rebuilt = dumpAll(projectInMemory([messages]));
      expect(dumpAll(projectInMemory(chunk(messages, cuts)))).toEqual(rebuilt);
      expect(dumpAll(projectInMemory(messages.map((m) => [m])))).toEqual(rebuilt);
    },
  );

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
      labels: JSON.parse(r.labels as string),
    }));
    const states = [...sim.states].filter(([s]) => s.startsWith('bc.evt.metal.node.')).map(([, s]) => s as NodeAggregateState);
    const enrolled = states.flatMap((s) => (s.exists ? [s] : []));
    const expected = enrolled
      .map((s) => ({
        nodeId: s.nodeId,
        siteId: s.siteId,
        maintenance: s.maintenance,
        maintenanceReason: s.maintenanceReason,
        macs: s.macs,
        labels: s.labels ?? {},
      }))
      .sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
    expect(nodes).toEqual(expected);
    const counts = dbs.get('sites')!.prepare('SELECT site_id AS siteId, node_count AS n FROM sites ORDER BY site_id').all() as { siteId: string; n: number }[];
    for (const { siteId, n } of counts) expect(n).toBe(enrolled.filter((s) => s.siteId === siteId).length);
    dumpAll(dbs);
  });
});
