import { describe, expect, it } from 'vitest';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import type { NodeOperation } from '../../schemas/metal/workflow.ts';
import type { WorkflowEvent } from '../../schemas/metal/workflowEvents.ts';
import { workflowIdFor } from '../../services/metal/node/lifecycle.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { deployNode } from '../../services/metal/node/deploy.ts';
import { rescueNode } from '../../services/metal/node/rescue.ts';
import { retireNode } from '../../services/metal/node/retire.ts';
import { retryNode } from '../../services/metal/node/retry.ts';
import { startInspection } from '../../services/metal/node/startInspection.ts';
import { undeployNode } from '../../services/metal/node/undeploy.ts';
import { unrescueNode } from '../../services/metal/node/unrescue.ts';
import { completeOperation } from '../../services/metal/node/completeOperation.ts';
import { failOperation } from '../../services/metal/node/failOperation.ts';
import { markWiping } from '../../services/metal/node/markWiping.ts';
import { recordInventory } from '../../services/metal/node/recordInventory.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { deployPayload } from './engineFixture.ts';
import { fakeInventory } from './fakeAgent.ts';
import { deciderSpec } from './spec.ts';

const given = deciderSpec(nodeAggregate);
const n = 'n1';
const wf = workflowIdFor(n, 'cmd-00000001');
const enrolled: MetalEvent = {
  type: 'NodeEnrolled',
  data: { nodeId: n, siteId: 'dc1', bmc: { address: 'https://10.0.0.1', credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] },
};
const requested = (operation: NodeOperation, workflowId = wf, inputs: Record<string, unknown> = {}): MetalEvent => ({
  type: 'NodeOperationRequested',
  data: { nodeId: n, siteId: 'dc1', operation, workflowId, inputs },
});
const completed = (operation: NodeOperation, workflowId = wf): MetalEvent => ({ type: 'NodeOperationCompleted', data: { nodeId: n, operation, workflowId } });
const ready = [enrolled, requested('inspect', 'wf-00000000000a'), completed('inspect', 'wf-00000000000a')];
const deployed = [...ready, requested('deploy', 'wf-00000000000b'), completed('deploy', 'wf-00000000000b')];
const releasing = [...deployed, requested('release')];
const inMaintenance: MetalEvent = { type: 'NodeMaintenanceSet', data: { nodeId: n, on: true, reason: 'fan', source: 'operator' } };

const noPool = { dependencies: { inputs: {} } };

/** A release (or retire) workflow whose wipe step succeeded, attested or not. */
function releaseWorkflow(attested: boolean, operation: NodeOperation = 'release') {
  const events: WorkflowEvent[] = [
    {
      type: 'WorkflowStarted',
      data: {
        workflowId: wf,
        nodeId: n,
        siteId: 'dc1',
        operation,
        profile: { id: operation, version: 1 },
        startedAt: '2026-12-02T12:00:00.000Z',
        steps: [{ id: 'disk.wipe', runsOn: 'node', params: {}, timeoutMs: 1000, retry: { maxAttempts: 1, backoffMs: 0 }, destructive: true, attests: 'wipe' }],
      },
    },
    { type: 'StepStarted', data: { workflowId: wf, stepIndex: 0, stepId: 'disk.wipe', attempt: 1 } },
    { type: 'StepSucceeded', data: { workflowId: wf, stepIndex: 0, stepId: 'disk.wipe', attempt: 1, output: attested ? { attested: true } : {} } },
  ];
  return events.reduce(workflowAggregate.evolve, workflowAggregate.initialState);
}

describe('node lifecycle deciders', () => {
  it('startInspection moves an enrolled node to inspecting and is a no-op while inspecting', () => {
    given([enrolled])
      .when(startInspection, { nodeId: n })
      .then([requested('inspect')]);
    given([enrolled, requested('inspect')])
      .when(startInspection, { nodeId: n })
      .then([]);
    given(ready).when(startInspection, { nodeId: n }).thenRejects('ILLEGAL_TRANSITION');
    given([]).when(startInspection, { nodeId: n }).thenRejects('NOT_FOUND');
  });

  it('completing inspection makes the node ready; inventory is recorded once', () => {
    const inspecting = given([enrolled, requested('inspect')]);
    expect(inspecting.state).toMatchObject({ state: 'inspecting' });
    inspecting.when(completeOperation, { nodeId: n, workflowId: wf }).then([completed('inspect')]);
    const recorded: MetalEvent = { type: 'NodeInventoryRecorded', data: { nodeId: n, workflowId: wf, inventory: fakeInventory } };
    inspecting.when(recordInventory, { nodeId: n, workflowId: wf, inventory: fakeInventory }).then([recorded]);
    given([enrolled, recorded]).when(recordInventory, { nodeId: n, workflowId: wf, inventory: fakeInventory }).then([]);
    expect(given([...ready]).state).toMatchObject({ state: 'ready', current: null });
  });

  it('deploy is allowed only from ready and out of maintenance', () => {
    const { nodeId: _n, ...inputs } = deployPayload(n);
    given(ready)
      .when(deployNode, deployPayload(n))
      .then([requested('deploy', wf, inputs)]);
    given([...ready, requested('deploy', wf, inputs)])
      .when(deployNode, deployPayload(n))
      .then([]);
    given([...ready, inMaintenance])
      .when(deployNode, deployPayload(n))
      .thenRejects('ILLEGAL_TRANSITION');
    given([enrolled]).when(deployNode, deployPayload(n)).thenRejects('ILLEGAL_TRANSITION');
    given(deployed)
      .when(deployNode, { ...deployPayload(n), imageSha256: 'b'.repeat(64) })
      .thenRejects('ILLEGAL_TRANSITION');
    expect(given([...ready, requested('deploy')]).state).toMatchObject({ state: 'deploying' });
    expect(given(deployed).state).toMatchObject({ state: 'deployed' });
  });

  it('undeploy releases a deployed node; the wipe step moves it to wiping', () => {
    given(deployed)
      .when(undeployNode, { nodeId: n }, noPool)
      .then([requested('release')]);
    given(deployed)
      .when(undeployNode, { nodeId: n }, { dependencies: { inputs: { wipeMethod: 'discard' } } })
      .then([requested('release', wf, { wipeMethod: 'discard' })]);
    given(releasing).when(undeployNode, { nodeId: n }, noPool).then([]);
    given(ready).when(undeployNode, { nodeId: n }, noPool).thenRejects('ILLEGAL_TRANSITION');
    given(releasing)
      .when(markWiping, { nodeId: n, workflowId: wf })
      .then([{ type: 'NodeWipeStarted', data: { nodeId: n, workflowId: wf } }]);
    expect(given([...releasing, { type: 'NodeWipeStarted', data: { nodeId: n, workflowId: wf } }]).state).toMatchObject({ state: 'wiping' });
  });

  it('a release returns the node to ready only with an attested wipe', () => {
    given(releasing)
      .when(completeOperation, { nodeId: n, workflowId: wf }, { dependencies: { workflow: releaseWorkflow(true) } })
      .then([completed('release')]);
    given(releasing)
      .when(completeOperation, { nodeId: n, workflowId: wf }, { dependencies: { workflow: releaseWorkflow(false) } })
      .then((events) =>
        expect(events).toMatchObject([{ type: 'NodeOperationFailed', data: { operation: 'release', failedStep: 'disk.wipe', maintenance: true } }]),
      );
    const after = given([...releasing, completed('release')]);
    expect(after.state).toMatchObject({ state: 'ready' });
  });

  it('a failed operation leaves the node failed with reason and step; release failures also set maintenance', () => {
    const failed = given(releasing)
      .when(failOperation, { nodeId: n, workflowId: wf, reason: 'boom', failedStep: 'disk.wipe' })
      .then((e) => expect(e).toHaveLength(1));
    const state = given([...releasing, ...failed]).state;
    expect(state).toMatchObject({
      state: 'failed',
      maintenance: true,
      maintenanceReason: 'boom',
      failed: { operation: 'release', reason: 'boom', failedStep: 'disk.wipe' },
    });
    given([...releasing, ...failed])
      .when(failOperation, { nodeId: n, workflowId: wf, reason: 'boom', failedStep: 'disk.wipe' })
      .then([]);
    given([...ready, requested('deploy')])
      .when(failOperation, { nodeId: n, workflowId: wf, reason: 'x', failedStep: 'image.write' })
      .then((e) => expect(e).toMatchObject([{ data: { maintenance: false } }]));
    given(ready).when(failOperation, { nodeId: n, workflowId: wf, reason: 'x', failedStep: null }).thenRejects('ILLEGAL_TRANSITION');
    given(deployed)
      .when(completeOperation, { nodeId: n, workflowId: 'wf-0000000000ff' }, { dependencies: { workflow: { exists: false } } })
      .then([]);
  });

  it('retry restarts the failed operation with its inputs as a new workflow', () => {
    const failed: MetalEvent = {
      type: 'NodeOperationFailed',
      data: { nodeId: n, operation: 'deploy', workflowId: wf, reason: 'x', failedStep: 'image.write', maintenance: false },
    };
    const history = [...ready, requested('deploy', wf, { imageUrl: 'u' }), failed];
    const retried = workflowIdFor(n, 'retry-0001');
    given(history)
      .when(retryNode, { nodeId: n }, { commandId: 'retry-0001' })
      .then([requested('deploy', retried, { imageUrl: 'u' })]);
    given(ready).when(retryNode, { nodeId: n }).thenRejects('ILLEGAL_TRANSITION');
  });

  it('retry is refused in maintenance, as deploy is (regression: issue 37, a retry ended deployed with maintenance on)', () => {
    const failed: MetalEvent = {
      type: 'NodeOperationFailed',
      data: { nodeId: n, operation: 'deploy', workflowId: wf, reason: 'x', failedStep: 'image.write', maintenance: false },
    };
    const history = [...ready, requested('deploy', wf, { imageUrl: 'u' }), failed];
    given([...history, inMaintenance])
      .when(retryNode, { nodeId: n })
      .thenRejects('ILLEGAL_TRANSITION');
    given([...history, inMaintenance, { type: 'NodeMaintenanceSet', data: { nodeId: n, on: false, reason: 'done', source: 'operator' } }])
      .when(retryNode, { nodeId: n }, { commandId: 'retry-0001' })
      .then([requested('deploy', workflowIdFor(n, 'retry-0001'), { imageUrl: 'u' })]);
  });

  it('rescue enters rescue from ready or deployed and unrescue returns there', () => {
    given(deployed)
      .when(rescueNode, { nodeId: n })
      .then([requested('rescue')]);
    given([enrolled]).when(rescueNode, { nodeId: n }).thenRejects('ILLEGAL_TRANSITION');
    const inRescue = [...deployed, requested('rescue'), completed('rescue')];
    expect(given(inRescue).state).toMatchObject({ state: 'rescue' });
    given(inRescue).when(rescueNode, { nodeId: n }).then([]);
    given(inRescue)
      .when(unrescueNode, { nodeId: n })
      .then([{ type: 'NodeRescueEnded', data: { nodeId: n } }]);
    expect(given([...inRescue, { type: 'NodeRescueEnded', data: { nodeId: n } }]).state).toMatchObject({ state: 'deployed' });
    given(ready).when(unrescueNode, { nodeId: n }).thenRejects('ILLEGAL_TRANSITION');
  });

  it('retire wipes an idle node and takes it out for good only with an attested wipe; busy nodes are refused', () => {
    given(ready)
      .when(retireNode, { nodeId: n }, noPool)
      .then([requested('retire')]);
    const retiring = [...ready, requested('retire')];
    expect(given(retiring).state).toMatchObject({ state: 'retiring' });
    given(retiring).when(retireNode, { nodeId: n }, noPool).then([]);
    given(deployed).when(retireNode, { nodeId: n }, noPool).thenRejects('ILLEGAL_TRANSITION');
    given(retiring)
      .when(completeOperation, { nodeId: n, workflowId: wf }, { dependencies: { workflow: releaseWorkflow(true, 'retire') } })
      .then([completed('retire')]);
    given(retiring)
      .when(completeOperation, { nodeId: n, workflowId: wf }, { dependencies: { workflow: releaseWorkflow(false, 'retire') } })
      .then((events) =>
        expect(events).toMatchObject([{ type: 'NodeOperationFailed', data: { operation: 'retire', failedStep: 'disk.wipe', maintenance: true } }]),
      );
    const retired = [...retiring, completed('retire')];
    expect(given(retired).state).toMatchObject({ state: 'retired', owner: null, current: null });
    given(retired).when(retireNode, { nodeId: n }, noPool).then([]);
    given(retired).when(deployNode, deployPayload(n)).thenRejects('ILLEGAL_TRANSITION');
    // A log written before retiring became a workflow still reads as retired.
    expect(given([...ready, { type: 'NodeRetired', data: { nodeId: n } }]).state).toMatchObject({ state: 'retired' });
  });
});
