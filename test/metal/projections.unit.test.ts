import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { getNode } from '../../projections/nodes/queries.ts';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import type { Projection } from '../../projections/runtime/projection.ts';
import { getWorkflow, listNodeWorkflows } from '../../projections/workflows/queries.ts';
import { workflowsProjection } from '../../projections/workflows/projector.ts';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { PlatformEvent } from '../../schemas/events.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { builtinProfiles } from '../../services/metal/profiles/builtin.ts';
import { fakeInventory } from './fakeAgent.ts';

function project(projection: Projection, events: PlatformEvent[]) {
  const db = new Database(':memory:');
  for (const m of projection.migrations) db.exec(m);
  events.forEach((e, i) => {
    const metadata = { time: `2026-12-02T12:00:${String(i).padStart(2, '0')}.000Z` } as EventMetadata;
    projection.apply(db, e, metadata, { seq: i + 1, subject: 'bc.evt.x.y.z' });
  });
  return db;
}

const wf = 'wf-0123456789ab';
const steps = resolveSteps(builtinProfiles.release, {});
const history: PlatformEvent[] = [
  {
    type: 'NodeEnrolled',
    data: { nodeId: 'n1', siteId: 'dc1', bmc: { address: 'https://b', credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] },
  },
  { type: 'NodeInventoryRecorded', data: { nodeId: 'n1', workflowId: 'wf-00000000000a', inventory: fakeInventory } },
  { type: 'NodeOperationRequested', data: { nodeId: 'n1', siteId: 'dc1', operation: 'release', workflowId: wf, inputs: {} } },
];
const started: PlatformEvent = {
  type: 'WorkflowStarted',
  data: {
    workflowId: wf,
    nodeId: 'n1',
    siteId: 'dc1',
    operation: 'release',
    profile: { id: 'release', version: 1 },
    steps,
    startedAt: '2026-12-02T12:00:00.000Z',
  },
};

describe('metal read models', () => {
  it('nodes show the waiting reason until the workflow starts, then the failure with its step', () => {
    expect(getNode(project(nodesProjection, history), 'n1')).toMatchObject({
      state: 'releasing',
      workflowId: wf,
      waitingReason: 'waiting-for-capacity',
      inventory: fakeInventory,
    });
    const failed: PlatformEvent = {
      type: 'NodeOperationFailed',
      data: { nodeId: 'n1', operation: 'release', workflowId: wf, reason: 'no wipe', failedStep: 'disk.wipe', maintenance: true },
    };
    const db = project(nodesProjection, [...history, started, { type: 'NodeWipeStarted', data: { nodeId: 'n1', workflowId: wf } }]);
    expect(getNode(db, 'n1')).toMatchObject({ state: 'wiping', waitingReason: null });
    expect(getNode(project(nodesProjection, [...history, started, failed]), 'n1')).toMatchObject({
      state: 'failed',
      maintenance: true,
      maintenanceReason: 'no wipe',
      workflowId: null,
      failure: { operation: 'release', reason: 'no wipe', failedStep: 'disk.wipe' },
    });
  });

  it('nodes show the role they are deployed as from the deploy request until they are back in ready or retired', () => {
    const ready: PlatformEvent[] = [
      history[0]!,
      { type: 'NodeOperationCompleted', data: { nodeId: 'n1', operation: 'inspect', workflowId: 'wf-00000000000a' } },
    ];
    const deploy: PlatformEvent = {
      type: 'NodeOperationRequested',
      data: { nodeId: 'n1', siteId: 'dc1', operation: 'deploy', workflowId: 'wf-00000000000b', inputs: { role: 'k8s-worker', imageUrl: 'u' } },
    };
    const deployed: PlatformEvent[] = [
      ...ready,
      deploy,
      { type: 'NodeOperationCompleted', data: { nodeId: 'n1', operation: 'deploy', workflowId: 'wf-00000000000b' } },
    ];
    expect(getNode(project(nodesProjection, ready), 'n1')!.role).toBeNull();
    expect(getNode(project(nodesProjection, [...ready, deploy]), 'n1')).toMatchObject({ state: 'deploying', role: 'k8s-worker' });
    const rescue: PlatformEvent = {
      type: 'NodeOperationRequested',
      data: { nodeId: 'n1', siteId: 'dc1', operation: 'rescue', workflowId: 'wf-00000000000c', inputs: {} },
    };
    expect(getNode(project(nodesProjection, [...deployed, rescue, { type: 'NodeRescueEnded', data: { nodeId: 'n1' } }]), 'n1')).toMatchObject({
      state: 'deployed',
      role: 'k8s-worker',
    });
    const release: PlatformEvent = { type: 'NodeOperationRequested', data: { nodeId: 'n1', siteId: 'dc1', operation: 'release', workflowId: wf, inputs: {} } };
    expect(getNode(project(nodesProjection, [...deployed, release]), 'n1')).toMatchObject({ state: 'releasing', role: 'k8s-worker' });
    const released = [
      ...deployed,
      release,
      { type: 'NodeOperationCompleted', data: { nodeId: 'n1', operation: 'release', workflowId: wf } },
    ] as PlatformEvent[];
    expect(getNode(project(nodesProjection, released), 'n1')).toMatchObject({ state: 'ready', role: null });
    const retire: PlatformEvent = {
      type: 'NodeOperationRequested',
      data: { nodeId: 'n1', siteId: 'dc1', operation: 'retire', workflowId: 'wf-00000000000d', inputs: {} },
    };
    expect(getNode(project(nodesProjection, [...released, retire]), 'n1')).toMatchObject({
      state: 'retiring',
      operation: 'retire',
      waitingReason: 'waiting-for-capacity',
    });
    const retired = [
      ...released,
      retire,
      { type: 'NodeOperationCompleted', data: { nodeId: 'n1', operation: 'retire', workflowId: 'wf-00000000000d' } },
    ] as PlatformEvent[];
    expect(getNode(project(nodesProjection, retired), 'n1')).toMatchObject({ state: 'retired', role: null, operation: null, tenantId: null });
  });

  it('workflows keep one row per step with attempts, output and rejected results', () => {
    const events: PlatformEvent[] = [
      started,
      { type: 'StepStarted', data: { workflowId: wf, stepIndex: 3, stepId: 'disk.wipe', attempt: 1 } },
      { type: 'AgentResultRejected', data: { workflowId: wf, stepIndex: 3, commandId: `${wf}-s3-a1`, reason: 'FORGED' } },
      {
        type: 'AgentResultsRejectedCounted',
        data: {
          workflowId: wf,
          stepIndex: 3,
          commandId: `${wf}-s3-a1`,
          from: '2026-01-01T00:00:00.000Z',
          to: '2026-01-01T00:00:01.000Z',
          refused: 41,
          sources: [{ source: 'unreadable', refused: 41, reasons: { MALFORMED: 41 } }],
          otherSources: 0,
        },
      },
      {
        type: 'StepFailed',
        data: { workflowId: wf, stepIndex: 3, stepId: 'disk.wipe', attempt: 1, code: 'AGENT_RESULT_REJECTED', message: 'x', retryable: true },
      },
      { type: 'StepStarted', data: { workflowId: wf, stepIndex: 3, stepId: 'disk.wipe', attempt: 2 } },
      { type: 'StepSucceeded', data: { workflowId: wf, stepIndex: 3, stepId: 'disk.wipe', attempt: 2, output: { attested: true } } },
      { type: 'WorkflowCompleted', data: { workflowId: wf } },
    ];
    const db = project(workflowsProjection, events);
    const view = getWorkflow(db, wf)!;
    expect(view).toMatchObject({ state: 'completed', operation: 'release', profile: { id: 'release', version: 1 }, endedAt: '2026-12-02T12:00:07.000Z' });
    expect(view.steps[3]).toMatchObject({
      stepId: 'disk.wipe',
      state: 'succeeded',
      attempts: 2,
      output: { attested: true },
      rejectedResults: 42,
      destructive: true,
      errorCode: null,
    });
    expect(view.steps[0]).toMatchObject({ state: 'pending', attempts: 0 });
    expect(listNodeWorkflows(db, 'n1').map((w) => w.workflowId)).toEqual([wf]);
    expect(db.prepare(`SELECT count(*) AS n FROM workflow_steps WHERE json_extract(output, '$.attested') = 1`).get()).toEqual({ n: 1 });
  });
});

describe('nodes projection of in-band inventories', () => {
  it('shows the last in-band inventory and its findings, kept when a BMC-only inspection recomputes the findings', () => {
    const inBand = {
      disks: [{ name: 'sda', sizeBytes: 1, serial: 'X', model: null, rotational: true, removable: false }],
      nics: [],
      cpus: { logical: 2, sockets: 1, cores: 2, model: null },
      memoryMiB: 1024,
    };
    const finding = { code: 'DISK_NOT_REPORTED_BY_BMC' as const, subject: 'X', detail: 'sda' };
    const db = project(nodesProjection, [
      history[0]!,
      { type: 'NodeInventoryRecorded', data: { nodeId: 'n1', workflowId: 'wf-00000000000a', inventory: fakeInventory } },
    ]);
    expect(getNode(db, 'n1')).toMatchObject({ inBandInventory: null, inventoryFindings: null });
    const metadata = { time: '2026-12-02T12:01:00.000Z' } as EventMetadata;
    const record = (data: Record<string, unknown>, seq: number) =>
      nodesProjection.apply(
        db,
        { type: 'NodeInventoryRecorded', data: { nodeId: 'n1', workflowId: 'wf-00000000000b', inventory: fakeInventory, ...data } },
        metadata,
        { seq, subject: 'bc.evt.x.y.z' },
      );
    record({ inBand, findings: [finding] }, 10);
    expect(getNode(db, 'n1')).toMatchObject({ inBandInventory: inBand, inventoryFindings: [finding] });
    record({ findings: [] }, 11);
    expect(getNode(db, 'n1')).toMatchObject({ inBandInventory: inBand, inventoryFindings: [] });
  });
});
